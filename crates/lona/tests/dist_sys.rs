//! OTP's `sys` and `supervisor` calls from a real `erl` node on a Lonala
//! `lona.server` and `lona.supervisor` (issue 38; rule 8 of
//! `src/lonala/server.lona`). Skipped, with a message, when `erl` is not
//! installed.

mod dist_common;

use dist_common::*;

/// A Lonala node: a supervisor registered as `sup` over a counter server
/// registered as `counter`.
const NODE: &str = r#"(ns user (:require [lona.server :as server] [lona.supervisor :as sup]))
(defn init [n] [:ok n])
(defn handle-call [msg from n]
  (match msg
    :get [:reply n n]
    [:add k] [:reply :ok (+ n k)]))
(defn handle-cast [[:add k] n] [:noreply (+ n k)])
(defn bump [n] (+ n 100))
(defn start-counter [] (server/start-link 'user 0 {:name :counter}))
(defn -main []
  (sup/start-link {:strategy :one-for-one :intensity 5 :period 5}
                  [{:id :counter :start ['user/start-counter]}]
                  {:name :sup})
  (println "ready")
  (receive :stop :ok))
"#;

/// How many times the suspend case runs.
const RUNS: usize = 100;

const EVAL: &str = r#"L = 'LONA',
S = {counter, L},
P = fun(F, A) -> io:format(F ++ "~n", A) end,
P("state ~p", [sys:get_state(S)]),
P("replace ~p", [sys:replace_state(S, fun user:bump/1)]),
P("badfun ~p", [element(1, catch sys:replace_state(S, fun(X) -> X + 1 end))]),
P("after badfun ~p", [sys:get_state(S)]),
{status, Pid, {module, gen_server}, [_, running, _, _, Misc]} = sys:get_status(S),
P("status ~p ~p", [is_pid(Pid), lists:last(Misc)]),
Me = self(),
Suspended = fun(N) ->
  ok = sys:suspend(S),
  gen_server:cast(S, {add, 1}),
  spawn(fun() -> Me ! {answer, gen_server:call(S, get)} end),
  Before = sys:get_state(S),
  {status, _, _, [_, Sys, _, _, _]} = sys:get_status(S),
  Early = receive {answer, _} -> early after 0 -> queued end,
  ok = sys:resume(S),
  After = receive {answer, A} -> A after 5000 -> none end,
  {Before =:= N, Sys, Early, After =:= N + 1}
end,
Results = [Suspended(100 + N) || N <- lists:seq(0, RUNS - 1)],
P("suspend ~p", [lists:usort(Results)]),
ok = sys:statistics(S, true),
gen_server:call(S, get),
gen_server:cast(S, {add, 0}),
{ok, Stats} = sys:statistics(S, get),
P("stats ~p ~p", [proplists:get_value(messages_in, Stats), proplists:get_value(messages_out, Stats)]),
ok = sys:statistics(S, false),
P("nostats ~p", [sys:statistics(S, get)]),
ok = sys:trace(S, true),
gen_server:call(S, get),
ok = sys:trace(S, false),
[{counter, C, worker, [user]}] = supervisor:which_children({sup, L}),
P("children ~p", [is_pid(C)]),
P("counts ~p", [supervisor:count_children({sup, L})]),
{status, _, {module, gen_server}, _} = sys:get_status({sup, L}),
P("sup state ~p", [is_map(sys:get_state({sup, L}))]),
P("unknown ~p", [catch sys:log(S, true)]),
ok = sys:terminate(S, shutdown),
timer:sleep(200),
[{counter, C2, worker, _}] = supervisor:which_children({sup, L}),
P("restarted ~p ~p", [is_pid(C2) andalso C2 =/= C, sys:get_state(S)]),
halt()."#;

/// `sys:get_state`, `replace_state` (an export fun naming a Lonala
/// function; a local fun fails with an error, the state kept),
/// `get_status` in OTP's shape, `suspend`/`resume` (a cast and a call
/// sent while suspended wait; system messages are still answered; 100
/// times), `statistics`, `trace` (printed by the Lonala node),
/// `supervisor:which_children`/`count_children` on a Lonala supervisor,
/// and `sys:terminate`, after which the supervisor restarts the server.
#[test]
fn sys_and_supervisor_calls_from_erlang() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "c38s", NODE);
    lona.expect("ready");
    let eval = EVAL
        .replace("LONA", &format!("{l}@{h}"))
        .replace("RUNS", &RUNS.to_string());
    let erl = Node::erl(&e, "c38s", &eval);
    erl.expect("state 0");
    erl.expect("replace 100");
    erl.expect("badfun 'EXIT'");
    erl.expect("after badfun 100");
    erl.expect(r#"status true {data,[{<<"State">>,100}]}"#);
    erl.expect("suspend [{true,suspended,queued,true}]");
    erl.expect("stats 2 1");
    erl.expect("nostats no_statistics");
    erl.expect("children true");
    erl.expect("counts [{specs,1},{active,1},{supervisors,0},{workers,1}]");
    erl.expect("sup state true");
    erl.expect("unknown {error,{unsupported,{log,true}}}");
    erl.expect("restarted true 0");
    lona.expect("*DBG* :counter got call :get from #pid<");
    lona.expect("*DBG* :counter sent");
}
