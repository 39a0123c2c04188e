//! Erlang's rules across the wire, with a real `erl` node as the peer
//! (issue 38): the signals between two processes keep their order (a
//! monitor or link the peer makes is in place before what it sends next
//! acts), and the runtime's own exit reasons reach Erlang under Erlang's
//! names and come back under Lonala's. Skipped, with a message, when `erl`
//! is not installed (`.ci/run` installs it).

mod dist_common;

use dist_common::*;

/// A Lonala node whose `main` starts a `lona.server` registered as
/// `counter` on `[:start from]` (answering `[:started result]`), kills a
/// process on `[:kill p]`, traps exits on `[:trap from]` and prints the
/// exit signals it gets, and on `[:watch p from]` monitors `p`, says
/// `:watching`, and prints the `DOWN`'s reason. The server ends with
/// reason `:boom` on the call or cast `:crash`, with the error
/// `[:case-clause v]` on the call `[:case v]` (no clause for `v` but 1),
/// and with `:function-clause` on `[:fclause v]`. `[:echo from x]` is
/// answered `[:echoed x]` (and the first element of each vector in `x`
/// printed).
const NODE: &str = r#"(ns user (:require [lona.server :as server]))
(defn one [1] :one)
(defn init [n] [:ok n])
(defn handle-call [msg from n]
  (match msg
    :crash (exit :boom)
    [:case v] [:reply (match v 1 :one) n]
    [:fclause v] [:reply (one v) n]))
(defn handle-cast [msg n]
  (match msg
    :crash (exit :boom)
    _ [:noreply n]))
(defn serve []
  (receive
    [:start from] (do (send from [:started (server/start 'user 0 {:name :counter})]) (serve))
    [:kill p] (do (exit p :kill) (serve))
    [:trap from] (do (process-flag :trap-exit true) (send from [:trapping (self)]) (serve))
    [:EXIT _ why] (do (println "exit" why) (serve))
    [:echo from x] (do (println "echo" (pr-str (map (fn [v] (if (vector? v) (first v) v)) x)))
                       (send from [:echoed x])
                       (serve))
    [:watch p from] (let [m (monitor p)]
                      (send from :watching)
                      (receive [:DOWN t _ why] :when (= t m) (println "down" why))
                      (serve))))
(defn -main []
  (register :main (self))
  (println "ready")
  (serve))
"#;

/// How many times each case runs in one `erl` run.
const RUNS: usize = 200;

/// The Erlang side of the order test: each case `RUNS` times, each time
/// on a fresh server; a line per case with the reasons seen and how
/// often (`cast #{boom => 200}`).
const ORDER: &str = r#"L = 'LONA',
process_flag(trap_exit, true),
Start = fun() -> {main, L} ! {start, self()},
  receive {started, {ok, P}} -> P after 10000 -> exit(nostart) end end,
Down = fun(M) -> receive {'DOWN', M, process, _, W} -> W after 10000 -> nodown end end,
Exit = fun(P) -> receive {'EXIT', P, W} -> W after 10000 -> noexit end end,
One = fun
  (cast) -> Start(), M = erlang:monitor(process, {counter, L}),
    gen_server:cast({counter, L}, crash), Down(M);
  (kill) -> P = Start(), M = erlang:monitor(process, P), exit(P, kill), Down(M);
  (call) -> Start(),
    case catch gen_server:call({counter, L}, crash) of {'EXIT', {W, _}} -> W; O -> {other, O} end;
  (link_kill) -> P = Start(), link(P), exit(P, kill), Exit(P);
  (link_cast) -> P = Start(), link(P), gen_server:cast(P, crash), Exit(P);
  (via_main) -> P = Start(), M = erlang:monitor(process, P), {main, L} ! {kill, P}, Down(M)
end,
Count = fun(W) -> lists:foldl(fun(R, A) -> maps:update_with(R, fun(X) -> X + 1 end, 1, A) end,
  #{}, [One(W) || _ <- lists:seq(1, RUNS)]) end,
[io:format("~p ~p~n", [W, Count(W)]) || W <- [cast, kill, call, link_kill, link_cast, via_main]],
halt()."#;

/// An Erlang process monitors or links to a Lonala process and at once
/// sends it (or another local process) what ends it; each case 200 times
/// in one run. Erlang keeps the signals between two processes in order,
/// across nodes too, so the monitor or link is in place when the process
/// ends, and the `DOWN` or `EXIT` carries its reason, never `noproc`:
/// - `cast`: `monitor(process, {counter, Node})`, then
///   `gen_server:cast` of a request the server ends on (`boom`);
/// - `kill`: `monitor(process, P)`, then `exit(P, kill)` (`killed`);
/// - `call`: `gen_server:call` of a request the server ends on: the
///   caller exits with the server's reason (`boom`), not `noproc` (the
///   call's monitor comes just before the request);
/// - `link_kill`, `link_cast`: `link(P)`, then `exit(P, kill)` or a cast
///   it ends on: the trapping caller gets `{'EXIT', P, killed}` or `boom`;
/// - `via_main`: `monitor(process, P)`, then a message to another local
///   process (`main`), which kills `P`: `killed`, as from an Erlang node,
///   which sets a monitor up as its packet is read. Before the reader made
///   monitors itself, all 500 of 500 runs of this said `noproc`.
#[test]
fn monitors_and_links_from_erlang_keep_their_place_in_the_order() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "c38", NODE);
    lona.expect("ready");
    let eval = ORDER
        .replace("LONA", &format!("{l}@{h}"))
        .replace("RUNS", &RUNS.to_string());
    let erl = Node::erl(&e, "c38", &eval);
    for (case, reason) in [
        ("cast", "boom"),
        ("kill", "killed"),
        ("call", "boom"),
        ("link_kill", "killed"),
        ("link_cast", "boom"),
        ("via_main", "killed"),
    ] {
        let line = erl.expect(case);
        assert_eq!(
            line,
            format!("{case} #{{{reason} => {RUNS}}}"),
            "the reasons {case} got, and how often"
        );
    }
}

/// The Erlang side of the reasons test.
const REASONS: &str = r#"L = 'LONA',
Start = fun() -> {main, L} ! {start, self()},
  receive {started, {ok, P}} -> P after 10000 -> exit(nostart) end end,
Start(),
case catch gen_server:call({counter, L}, {'case', 5}) of
  {'EXIT', {{error, {case_clause, 5}}, {gen_server, call, _}}} -> io:format("case_clause matched~n");
  R1 -> io:format("case_clause not matched: ~p~n", [R1])
end,
P2 = Start(),
M = erlang:monitor(process, P2),
catch gen_server:call(P2, {fclause, 2}),
receive
  {'DOWN', M, process, P2, {error, function_clause}} -> io:format("function_clause matched~n");
  D -> io:format("function_clause not matched: ~p~n", [D])
after 10000 -> io:format("no DOWN~n")
end,
{main, L} ! {trap, self()},
Main = receive {trapping, Pid} -> Pid end,
exit(Main, {case_clause, 7}),
exit(Main, function_clause),
spawn(fun() -> link(Main), exit(if_clause) end),
Q = spawn(fun() -> receive go -> exit({try_clause, 3}) end end),
{main, L} ! {watch, Q, self()},
receive watching -> Q ! go end,
timer:sleep(20000),
halt()."#;

/// The runtime's reasons reach an Erlang node under Erlang's names, and
/// Erlang's reach Lonala under Lonala's (`dist/reason.rs`):
/// - a `gen_server:call` to a Lonala server that fails on a `match`
///   with no clause: the caller's `catch` matches
///   `{'EXIT', {{error, {case_clause, 5}}, {gen_server, call, _}}}`
///   (Lonala ends a process on an uncaught error `e` with `[:error e]`);
/// - the same with a function clause: a monitor's `DOWN` says
///   `{error, function_clause}`;
/// - `exit(Pid, {case_clause, 7})` and `exit(Pid, function_clause)` to a
///   trapping Lonala process, a linked Erlang process ending with
///   `if_clause`, a monitored one with `{try_clause, 3}`: Lonala gets
///   `[:case-clause 7]`, `:function-clause`, `:if-clause` and
///   `[:try-clause 3]`.
#[test]
fn error_reasons_cross_under_erlangs_names_and_back() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "c38r", NODE);
    lona.expect("ready");
    let eval = REASONS.replace("LONA", &format!("{l}@{h}"));
    let erl = Node::erl(&e, "c38r", &eval);
    erl.expect("case_clause matched");
    erl.expect("function_clause matched");
    // The linked process and the monitored one are not the sender of the
    // others: their signals may come in any order among them.
    let mut got: Vec<String> = (0..4).map(|_| lona.expect("")).collect();
    got.sort();
    assert_eq!(
        got,
        [
            "down [:try-clause 3]",
            "exit :function-clause",
            "exit :if-clause",
            "exit [:case-clause 7]",
        ]
    );
}

/// The Erlang side of the echo test.
const ECHO: &str = r#"L = 'LONA',
Y = 7,
X = [fun lists:map/2, <<1:3>>, <<255, 3:2>>, fun(A) -> A + Y end, {fun erlang:self/0}, <<"plain">>],
{main, L} ! {echo, self(), X},
Back = receive {echoed, B} -> B after 10000 -> none end,
io:format("same ~p~n", [Back =:= X]),
F = lists:nth(4, Back),
io:format("callable ~p ~p~n", [F(1), (hd(Back))(fun(E) -> E * 2 end, [1, 2])]),
halt()."#;

/// Terms Lonala has no kind for, sent from `erl`, reach the Lonala
/// process as tagged vectors (an export fun `[:erlang/fun m f a]`, a bit
/// string `[:erlang/bits bytes size]`, a local fun `[:erlang/local-fun
/// module arity bytes]`) instead of the message being dropped, and go
/// back to Erlang as the same terms: the echo is `=:=` to what was sent,
/// and the funs that come back can be called.
#[test]
fn funs_and_bit_strings_from_erlang_arrive_and_go_back_unchanged() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "c38e", NODE);
    lona.expect("ready");
    let erl = Node::erl(&e, "c38e", &ECHO.replace("LONA", &format!("{l}@{h}")));
    erl.expect("same true");
    erl.expect("callable 8 [2,4]");
    lona.expect(
        r#"echo (:erlang/fun :erlang/bits :erlang/bits :erlang/local-fun [:erlang/fun :erlang :self 0] #bin"plain")"#,
    );
}
