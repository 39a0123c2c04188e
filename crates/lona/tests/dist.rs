//! Distribution against real Erlang nodes and between Lona nodes, on
//! this host: `lona run --sname` programs and `erl -sname` nodes, through
//! the `epmd` either of them starts. Skipped, with a message, when `erl`
//! is not installed (`.ci/run` installs it).

mod dist_common;

use dist_common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

/// A Lonala node that registers `:echo`, says `ready`, and answers each
/// `[:echo name node msg]` by sending `[:echoed msg (node)]` to `[name
/// node]`, until `:stop`.
const ECHO: &str = r#"
(defn serve []
  (receive
    [:echo to-name to-node msg] (do (send [to-name to-node] [:echoed msg (node)]) (serve))
    :stop (println "stopped")
    other (do (println "got" other) (serve))))
(defn -main []
  (register :echo (self))
  (println "ready" (node))
  (serve))
"#;

#[test]
fn erlang_pings_lona_and_messages_cross_both_ways() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "c1", ECHO);
    lona.expect(&format!("ready :{l}@{h}"));
    let erl = Node::erl(
        &e,
        "c1",
        &format!(
            "register(collector, self()),
             io:format(\"ping ~p~n\", [net_adm:ping('{l}@{h}')]),
             {{echo, '{l}@{h}'}} ! {{echo, collector, node(), {{hello, 1, <<\"bin\">>, [1, 2.5], #{{k => -7}}, 123456789012345678901234567890}}}},
             receive M -> io:format(\"erl got ~w~n\", [M]) after 5000 -> io:format(\"timeout~n\") end,
             io:format(\"nodes ~w~n\", [nodes()]),
             {{echo, '{l}@{h}'}} ! stop,
             timer:sleep(200),
             halt()."
        ),
    );
    erl.expect("ping pong");
    erl.expect(&format!(
        "erl got {{echoed,{{hello,1,<<98,105,110>>,[1,2.5],#{{k => -7}},123456789012345678901234567890}},{l}@{h}}}"
    ));
    erl.expect(&format!("nodes [{l}@{h}]"));
    lona.expect("stopped");
}

#[test]
fn lona_connects_first_and_an_unknown_node_is_false() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let erl = Node::erl(
        &e,
        "c2",
        "register(collector, self()), io:format(\"up~n\"),
         receive {first, From} -> {echo, From} ! back end,
         receive after 3000 -> ok end, halt().",
    );
    erl.expect("up");
    let mut lona = Node::lona(
        &l,
        "c2",
        &format!(
            r#"(defn -main []
                 (register :echo (self))
                 (println "connect" (connect-node :{e}@{h}))
                 (println "nodes" (nodes))
                 (send [:collector :{e}@{h}] [:first (node)])
                 (println "got" (receive x x :timeout 5000 :none))
                 (println "missing" (connect-node :nobody{l}@{h}))
                 (println "bad name" (connect-node :nohost)))"#
        ),
    );
    lona.expect("connect true");
    lona.expect(&format!("nodes [:{e}@{h}]"));
    lona.expect("got :back");
    lona.expect("missing false");
    lona.expect("bad name false");
    assert!(lona.wait().success());
}

#[test]
fn two_lona_nodes_talk_and_keep_order() {
    if !epmd_available() {
        return;
    }
    let (a, b, h) = (unique("la"), unique("lb"), host());
    let nb = Node::lona(&b, "c3", ECHO);
    nb.expect("ready");
    let mut na = Node::lona(
        &a,
        "c3",
        &format!(
            r#"(defn -main []
                 (register :me (self))
                 (dotimes [i 2000] (send [:echo :{b}@{h}] [:echo :me (node) i]))
                 (let [got (loop [i 0 ok true]
                             (if (= i 2000) ok
                               (receive [:echoed n _] (recur (inc i) (and ok (= n i))))))]
                   (println "in order" got))
                 (send [:echo :{b}@{h}] :stop))"#
        ),
    );
    na.expect("in order true");
    nb.expect("stopped");
    assert!(na.wait().success());
}

#[test]
fn a_wrong_cookie_is_refused_and_logged() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "right", ECHO);
    lona.expect("ready");
    let erl = Node::erl(
        &e,
        "wrong",
        &format!("io:format(\"ping ~p~n\", [net_adm:ping('{l}@{h}')]), halt()."),
    );
    erl.expect("ping pang");
    let until = Instant::now() + Duration::from_secs(10);
    while !lona.stderr().contains("refused") {
        assert!(Instant::now() < until, "not logged: {}", lona.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    // And the other way: the Lona node cannot reach a node with another
    // cookie.
    let erl2 = Node::erl(
        &unique("erl"),
        "other",
        "io:format(\"up~p~n\", [node()]), receive after 10000 -> ok end.",
    );
    let up = erl2.expect("up");
    let peer = up.trim_start_matches("up").to_string();
    let lona2 = Node::lona(
        &unique("lona"),
        "right",
        &format!("(defn -main [] (println \"connect\" (connect-node :{peer})))"),
    );
    lona2.expect("connect false");
}

#[test]
fn a_name_in_use_is_a_clear_error() {
    if !epmd_available() {
        return;
    }
    let (n, h) = (unique("dup"), host());
    let first = Node::lona(&n, "c5", ECHO);
    first.expect(&format!("ready :{n}@{h}"));
    let mut second = Node::lona(&n, "c5", ECHO);
    let status = second.wait();
    assert!(!status.success());
    assert!(
        second.stderr().contains("already in use"),
        "stderr: {}",
        second.stderr()
    );
}

#[test]
fn the_default_cookie_is_created_in_home_and_shared_with_erlang() {
    if !erl_available() {
        return;
    }
    let home_dir = scratch();
    let home = home_dir.path();
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let dir = scratch();
    let file = dir.path().join("main.lona");
    std::fs::write(&file, ECHO).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.arg("run")
        .arg(&file)
        .args(["--sname", &l])
        .env("HOME", home);
    let lona = Node::spawn(cmd);
    lona.expect("ready");
    let cookie = std::fs::read_to_string(home.join(".erlang.cookie")).unwrap();
    assert_eq!(cookie.len(), 20);
    let mut cmd = Command::new("erl");
    cmd.args(["-sname", &e, "-noshell", "-eval"])
        .arg(format!(
            "io:format(\"ping ~p~n\", [net_adm:ping('{l}@{h}')]), halt()."
        ))
        .env("HOME", home);
    let erl = Node::spawn(cmd);
    erl.expect("ping pong");
}

#[test]
fn garbage_on_the_distribution_port_closes_that_connection_only() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "c7", ECHO);
    lona.expect("ready");
    // Ask epmd for the node's port, as a peer would.
    let port = epmd_port_of(&l);
    for junk in [
        &b""[..],
        b"\x00",
        b"\x00\x05Nxxxx",
        b"\xff\xff\xff\xff\xff\xff",
        b"\x00\x0bN\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
    ] {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _ = s.write_all(junk);
        let _ = s.shutdown(std::net::Shutdown::Write);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    }
    // A peer that connects and says nothing is dropped after the setup
    // time; meanwhile the node serves others.
    let _silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let erl = Node::erl(
        &e,
        "c7",
        &format!("io:format(\"ping ~p~n\", [net_adm:ping('{l}@{h}')]), halt()."),
    );
    erl.expect("ping pong");
}

#[test]
fn pids_and_references_cross_both_ways() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(
        &l,
        "c8",
        r#"(defn -main []
             (register :echo (self))
             (println "ready")
             (let [[_ pid] (receive [:ping p] [:ping p])]
               (println "pid" (pid? pid) (node pid))
               (send pid [:pong (self) (make-ref)])
               (println "back" (receive [:back r p2] (and (ref? r) (= p2 pid)) :timeout 5000 :none))
               (println "closure" (try (send pid (fn [] 1)) :sent (catch :error e (first e))))))"#,
    );
    lona.expect("ready");
    let _erl = Node::erl(
        &e,
        "c8",
        &format!(
            "{{echo, '{l}@{h}'}} ! {{ping, self()}},
             receive {{pong, P, R}} -> io:format(\"~p~n\", [node(P)]), P ! {{back, R, self()}} end,
             timer:sleep(3000), halt()."
        ),
    );
    lona.expect(&format!("pid true :{e}@{h}"));
    lona.expect("back true");
    lona.expect("closure :badarg");
}

#[test]
fn gen_server_calls_cross_both_ways() {
    if !erl_available() {
        return;
    }
    let tmp = scratch();
    let dir = tmp.path();
    std::fs::write(
        dir.join("ecounter.erl"),
        "-module(ecounter).
-behaviour(gen_server).
-export([start/0, init/1, handle_call/3, handle_cast/2]).
start() -> gen_server:start({local, ecounter}, ?MODULE, 100, []).
init(N) -> {ok, N}.
handle_call(get, _From, N) -> {reply, N, N};
handle_call({add, K}, _From, N) -> {reply, ok, N + K};
handle_call(crash, _From, _N) -> exit(crashed).
handle_cast({add, K}, N) -> {noreply, N + K}.
",
    )
    .unwrap();
    let st = Command::new("erlc")
        .arg("ecounter.erl")
        .current_dir(dir)
        .status()
        .expect("erlc");
    assert!(st.success());
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(
        &l,
        "c9",
        &format!(
            r#"(ns user (:require [lona.server :as server]))
(defn init [n] [:ok n])
(defn handle-call [msg from n]
  (match msg
    :get [:reply n n]
    [:add k] [:reply :ok (+ n k)]))
(defn handle-cast [msg n] (match msg [:add k] [:noreply (+ n k)]))
(defn -main []
  (server/start 'user 10 {{:name :counter}})
  (register :main (self))
  (println "ready")
  (receive :go nil)
  (let [s [:ecounter :{e}@{h}]]
    (println "erl get" (server/call s :get))
    (println "erl add" (server/call s [:add 5]))
    (server/cast s [:add 1])
    (println "erl get" (server/call s :get))
    (println "missing" (try (server/call [:nobody :{e}@{h}] :get) (catch :exit e (first e))))
    (println "crash" (try (server/call s :crash) (catch :exit e (first e))))))"#
        ),
    );
    lona.expect("ready");
    let mut cmd = Command::new("erl");
    cmd.args(["-sname", &e, "-setcookie", "c9", "-noshell", "-eval"])
        .arg(format!(
            "S = {{counter, '{l}@{h}'}},
             io:format(\"get ~p~n\", [gen_server:call(S, get)]),
             io:format(\"add ~p~n\", [gen_server:call(S, {{add, 3}})]),
             gen_server:cast(S, {{add, 100}}),
             io:format(\"get ~p~n\", [gen_server:call(S, get)]),
             io:format(\"missing ~p~n\", [catch gen_server:call({{nobody, '{l}@{h}'}}, get)]),
             {{ok, _}} = ecounter:start(),
             {{main, '{l}@{h}'}} ! go,
             timer:sleep(8000), halt()."
        ))
        .current_dir(dir);
    let erl = Node::spawn(cmd);
    erl.expect("get 10");
    erl.expect("add ok");
    erl.expect("get 113");
    erl.expect(&format!(
        "missing {{'EXIT',{{noproc,{{gen_server,call,[{{nobody,{l}@{h}}},get]}}}}}}"
    ));
    lona.expect("erl get 100");
    lona.expect("erl add :ok");
    lona.expect("erl get 106");
    lona.expect("missing :noproc");
    lona.expect("crash :crashed");
}

#[test]
fn a_killed_node_is_noconnection_and_nodedown() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let mut erl = Node::erl(
        &e,
        "c10",
        "register(target, self()), io:format(\"up~n\"), receive after 60000 -> ok end.",
    );
    erl.expect("up");
    let lona = Node::lona(
        &l,
        "c10",
        &format!(
            r#"(defn -main []
  (println "connect" (connect-node :{e}@{h}))
  (monitor-node :{e}@{h} true)
  (let [r (monitor [:target :{e}@{h}])
        r2 (monitor [:nobody :{e}@{h}])]
    (println "noproc" (receive [:DOWN t who why] :when (= t r2) [who why] :timeout 5000 :none))
    (println "armed")
    (println "down" (receive [:DOWN t who why] :when (= t r) [who why] :timeout 10000 :none))
    (println "nodedown" (receive [:nodedown n] n :timeout 10000 :none))
    (println "nodes" (nodes))
    (let [r3 (monitor [:target :{e}@{h}])]
      (println "again" (receive [:DOWN t _ why] :when (= t r3) why :timeout 10000 :none)))))"#
        ),
    );
    lona.expect("connect true");
    lona.expect(&format!("noproc [[:nobody :{e}@{h}] :noproc]"));
    lona.expect("armed");
    // SIGKILL: no goodbye from the peer, only the socket's end.
    erl.child.kill().unwrap();
    let _ = erl.child.wait();
    lona.expect(&format!("down [[:target :{e}@{h}] :noconnection]"));
    lona.expect(&format!("nodedown :{e}@{h}"));
    lona.expect("nodes []");
    lona.expect("again :noconnection");
}

/// Between two Lona nodes: a `lona.server` call each way, then one node
/// killed (SIGKILL) while the other holds a link to, a monitor on and a
/// node monitor of it: `:noconnection` and `[:nodedown n]` come.
#[test]
fn two_lona_nodes_call_and_a_killed_one_is_noconnection() {
    if !epmd_available() {
        return;
    }
    let (a, b, h) = (unique("la"), unique("lb"), host());
    let server = r#"(ns user (:require [lona.server :as server]))
(defn init [n] [:ok n])
(defn handle-call [msg from n]
  (match msg
    :get [:reply [n (node)] n]
    [:add k] [:reply :ok (+ n k)]))
(defn handle-cast [msg n] n)
(defn sleeper [] (receive :never nil))
"#;
    let mut nb = Node::lona(
        &b,
        "c15",
        &format!(
            r#"{server}
(defn -main []
  (server/start 'user 40 {{:name :counter}})
  (register :sleeper (spawn sleeper))
  (register :main (self))
  (println "ready")
  (receive :go nil)
  (println "b calls a" (server/call [:counter :{a}@{h}] :get))
  (receive :never nil))"#
        ),
    );
    nb.expect("ready");
    let na = Node::lona(
        &a,
        "c15",
        &format!(
            r#"{server}
(defn -main []
  (server/start 'user 2 {{:name :counter}})
  (let [s [:counter :{b}@{h}]]
    (println "a calls b" (server/call s [:add 2]) (server/call s :get)))
  (process-flag :trap-exit true)
  (let [p (spawn-link-on :{b}@{h} 'user/sleeper)
        r (monitor [:sleeper :{b}@{h}])]
    (monitor-node :{b}@{h} true)
    (send [:sleeper :{b}@{h}] :ping)
    (send [:main :{b}@{h}] :go)
    (println "armed")
    (println "exit" (receive [:EXIT q why] :when (= q p) why :timeout 10000 :none))
    (println "down" (receive [:DOWN t _ why] :when (= t r) why :timeout 10000 :none))
    (println "nodedown" (receive [:nodedown n] n :timeout 10000 :none))
    (println "nodes" (nodes))))"#
        ),
    );
    na.expect(&format!("a calls b :ok [42 :{b}@{h}]"));
    na.expect("armed");
    nb.expect(&format!("b calls a [2 :{a}@{h}]"));
    nb.child.kill().unwrap();
    let _ = nb.child.wait();
    na.expect("exit :noconnection");
    na.expect("down :noconnection");
    na.expect(&format!("nodedown :{b}@{h}"));
    na.expect("nodes []");
}

#[test]
fn a_thousand_processes_a_side_keep_order() {
    if !epmd_available() {
        return;
    }
    let (a, b, h) = (unique("la"), unique("lb"), host());
    // Node B: 1,000 echo processes; their pids go to A in one message.
    let nb = Node::lona(
        &b,
        "c11",
        r#"(defn echo [n expect]
  (receive [from i] (if (= i expect)
                      (do (send from [:echo i]) (if (= (inc i) n) :done (echo n (inc i))))
                      (println "out of order" i expect))))
(defn -main []
  (register :b (self))
  (println "ready")
  (let [[_ main] (receive [:hello p] [:hello p])
        pids (vec (for [_ (range 1000)] (spawn (fn [] (echo 1000 0)))))]
    (send main [:pids pids])
    (receive :stop (println "stopped"))))"#,
    );
    nb.expect("ready");
    let mut na = Node::lona(
        &a,
        "c11",
        &format!(
            r#"(defn pair [main peer n]
  (dotimes [i n] (send peer [(self) i]))
  (loop [i 0]
    (if (= i n)
      (send main [:ok (self)])
      (receive [:echo j] (if (= i j) (recur (inc i)) (send main [:bad (self)]))))))
(defn -main []
  (send [:b :{b}@{h}] [:hello (self)])
  (let [[_ pids] (receive [:pids ps] [:pids ps])
        me (self)]
    (doseq [p pids] (spawn (fn [] (pair me p 1000))))
    (let [oks (loop [k 0 ok 0]
                (if (= k 1000) ok
                  (receive [:ok _] (recur (inc k) (inc ok))
                           [:bad _] (recur (inc k) ok))))]
      (println "pairs in order" oks))
    (send [:b :{b}@{h}] :stop)))"#
        ),
    );
    na.expect("pairs in order 1000");
    nb.expect("stopped");
    assert!(na.wait().success());
}

#[test]
fn links_cross_both_ways_and_a_killed_node_cuts_them() {
    if !erl_available() {
        return;
    }
    let tmp = scratch();
    let dir = tmp.path();
    std::fs::write(
        dir.join("linktest.erl"),
        "-module(linktest).
-export([run/1]).
run([LonaS]) ->
    Lona = list_to_atom(LonaS),
    W = fun(R) -> spawn(fun() -> receive go -> exit(R) end end) end,
    E1 = W(boom), E2 = W(crash2),
    {main, Lona} ! {pids, E1, E2},
    process_flag(trap_exit, true),
    receive {linkto, LP} -> link(LP), {main, Lona} ! linked end,
    receive {'EXIT', From, Why} -> {main, Lona} ! {erlsaw, node(From), Why}
    after 5000 -> {main, Lona} ! erltimeout end,
    E3 = spawn(fun() -> receive after infinity -> ok end end),
    {main, Lona} ! {e3, E3},
    io:format(\"e3 sent~n\"),
    receive after 20000 -> ok end.
",
    )
    .unwrap();
    assert!(Command::new("erlc")
        .arg("linktest.erl")
        .current_dir(dir)
        .status()
        .expect("erlc")
        .success());
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(
        &l,
        "c12",
        r#"(defn -main []
  (register :main (self))
  (process-flag :trap-exit true)
  (println "ready")
  (let [[_ e1 e2] (receive [:pids a b] [:pids a b])
        erl (node e1)]
    ;; Lona links to an Erlang process that exits: trapped, and a
    ;; non-trapping linked process dies with the reason.
    (link e1)
    (send e1 :go)
    (println "trapped" (receive [:EXIT p r] [(= p e1) r] :timeout 5000 :none))
    (let [child (spawn (fn [] (link e2) (send e2 :go) (receive :never nil)))
          m (monitor child)]
      (println "child" (receive [:DOWN t _ r] :when (= t m) r :timeout 5000 :none)))
    ;; Erlang links to a Lona process that exits.
    (let [lp (spawn (fn [] (receive :die (exit :lona-reason))))]
      (send [:erlshell erl] [:linkto lp])
      (receive :linked nil :timeout 5000 nil)
      (send lp :die))
    (println "erl saw" (receive [:erlsaw n r] [n r] :timeout 5000 :none))
    ;; A link the peer's death cuts.
    (let [[_ e3] (receive [:e3 p] [:e3 p])]
      (link e3)
      (println "linked e3")
      (println "cut" (receive [:EXIT p r] :when (= p e3) r :timeout 10000 :none)))))"#,
    );
    lona.expect("ready");
    let mut cmd = Command::new("erl");
    cmd.args(["-sname", &e, "-setcookie", "c12", "-noshell", "-eval"])
        .arg(format!(
            "register(erlshell, self()), linktest:run([\"{l}@{h}\"])."
        ))
        .current_dir(dir);
    let mut erl = Node::spawn(cmd);
    lona.expect("trapped [true :boom]");
    lona.expect("child :crash2");
    lona.expect(&format!("erl saw [:{l}@{h} :lona-reason]"));
    erl.expect("e3 sent");
    lona.expect("linked e3");
    erl.child.kill().unwrap();
    let _ = erl.child.wait();
    lona.expect("cut :noconnection");
}

#[test]
fn a_native_rust_node_sends_rust_values_to_erlang_and_back() {
    if !erl_available() {
        return;
    }
    let (r, e, h) = (unique("rust"), unique("erl"), host());
    let erl = Node::erl(
        &e,
        "c13",
        &format!(
            "register(collector, self()), io:format(\"up~n\"),
             receive {{greet, N, Text}} -> io:format(\"got ~p ~s~n\", [N, Text]),
                     {{rust, '{r}@{h}'}} ! {{reply, N + 1, #{{ok => true}}, self()}}
             end,
             receive {{thanks, K}} -> io:format(\"thanks ~p~n\", [K]) after 5000 -> io:format(\"none~n\") end,
             halt()."
        ),
    );
    erl.expect("up");
    // The Builder option (`Distributed`): a runtime that is a node.
    use lona_vm::dist::Distributed;
    let mut cfg = lona_vm::dist::Config::short(&r);
    cfg.cookie = Some("c13".into());
    let (rt, d) = lona_runtime::Builder::default()
        .workers(2)
        .distributed(cfg)
        .build()
        .unwrap();
    assert_eq!(d.name(), format!("{r}@{h}"));
    #[derive(serde::Serialize)]
    enum Msg {
        Greet(i64, String),
        Thanks(i64),
    }
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Flags {
        ok: bool,
    }
    let peer = format!("{e}@{h}");
    let (tag, n, flags, from) = rt
        .block_on(move |ctx| async move {
            ctx.register("rust").await.unwrap();
            d.send_value(ctx.pid(), "collector", &peer, &Msg::Greet(41, "hi".into()))
                .unwrap();
            let f: lona_term::Fragment = ctx.receive().await;
            let got: (String, i64, Flags, lona_vm::bridge::RemotePidTerm) =
                lona_vm::bridge::from_message(&f).unwrap();
            // Answer the Erlang process by the pid it sent.
            d.send_value_to(&got.3, &Msg::Thanks(7)).unwrap();
            got
        })
        .unwrap();
    assert_eq!((tag.as_str(), n, flags), ("reply", 42, Flags { ok: true }));
    assert_eq!(from.node, format!("{e}@{h}"));
    erl.expect("got 41 hi");
    erl.expect("thanks 7");
}

/// The Builder option refuses a bad node name with an error that says
/// why, and the runtime it had started is shut down again (its workers
/// gone: a second build in the same test works).
#[test]
fn a_bad_node_name_in_the_builder_is_an_error_not_a_half_started_node() {
    use lona_vm::dist::{Config, Distributed};
    for bad in ["", "has space", "two@@ats"] {
        let err = lona_runtime::Builder::default()
            .workers(1)
            .distributed(Config::short(bad))
            .build()
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("node name"), "{bad:?}: {err}");
    }
    let rt = lona_runtime::Builder::default().workers(1).build().unwrap();
    assert_eq!(rt.block_on(|_ctx| async { 7 }).unwrap(), 7);
}

/// A process-to-process message of 30 MB each way: sent and received in
/// fragments (`DFLAG_FRAGMENTS`), joined whole, and while ours goes out
/// another process's small messages go between its fragments, each
/// sender's order kept.
#[test]
fn large_messages_cross_in_fragments_and_small_ones_pass_between() {
    use lona_term::{Fragment, Heap, Term, View};
    if !erl_available() {
        return;
    }
    let (r, e, h) = (unique("rust"), unique("erl"), host());
    // Erlang echoes the blob and sends one of its own; it notes the order
    // messages came in and reports it on `done`.
    let erl = Node::erl(
        &e,
        "c14",
        &format!(
            "register(big, self()), io:format(\"up~n\"),
             Me = {{rust, '{r}@{h}'}},
             L = fun L(Seen) ->
                 receive
                     {{blob, B}} -> Me ! {{echo, B}},
                                   Me ! {{back, binary:copy(<<\"fragment\">>, 400000)}},
                                   L([blob | Seen]);
                     {{small, N}} -> L([{{small, N}} | Seen]);
                     {{after_big, N}} -> L([{{after_big, N}} | Seen]);
                     done -> Me ! {{order, lists:reverse(Seen)}}
                 end
             end,
             L([]), timer:sleep(1000), halt()."
        ),
    );
    erl.expect("up");
    let rt = lona_runtime::Runtime::new().unwrap();
    let mut cfg = lona_vm::dist::Config::short(&r);
    cfg.cookie = Some("c14".into());
    // Room for the whole blob and what follows it: past the limit a
    // native send is refused (`RemoteSendError::Busy`), and this test is
    // about the fragments, not the limit.
    cfg.busy_limit = 64 << 20;
    let d = lona_vm::dist::start_native(&rt.handle(), cfg).unwrap();
    let peer = format!("{e}@{h}");
    let blob: Vec<u8> = (0..30_000_000u32).map(|i| (i % 251) as u8).collect();
    struct Go;
    struct Sent;
    let d2 = d.clone();
    let order = rt
        .block_on(move |ctx| async move {
            ctx.register("rust").await.unwrap();
            let me = ctx.pid();
            let (d3, peer3) = (d2.clone(), peer.clone());
            // The other sender: 200 small messages once the blob is queued.
            let other = ctx
                .spawn(move |cx| async move {
                    let Go = cx.receive::<Go>().await;
                    let heap = Heap::new();
                    for n in 1..=200 {
                        let m = heap.vector(&[Term::keyword("small"), heap.int(n)]);
                        d3.send_reg(cx.pid(), "big", &peer3, m).unwrap();
                    }
                    cx.send(me, Sent).await;
                })
                .await
                .unwrap();
            let heap = Heap::new();
            let m = heap.vector(&[Term::keyword("blob"), heap.binary(&blob)]);
            d2.send_reg(me, "big", &peer, m).unwrap();
            ctx.send(other, Go).await;
            for n in 1..=10 {
                let m = heap.vector(&[Term::keyword("after_big"), heap.int(n)]);
                d2.send_reg(me, "big", &peer, m).unwrap();
            }
            let t = Duration::from_secs(30);
            let Sent = ctx.receive_timeout::<Sent>(t).await.expect("sent");
            d2.send_reg(me, "big", &peer, Term::keyword("done"))
                .unwrap();
            let mut got = Vec::new();
            for i in 0..3 {
                let f = ctx.receive_timeout::<Fragment>(t).await;
                got.push(f.unwrap_or_else(|| panic!("message {i} from erl missing")));
            }
            fn tagged<'f>(f: &'f Fragment, tag: &str) -> Option<Term<'f>> {
                match f.root().view() {
                    View::Vector(v) if v[0] == Term::keyword(tag) => Some(v[1]),
                    _ => None,
                }
            }
            let echo = tagged(&got[0], "echo").expect("the echo first");
            assert!(matches!(echo.view(), View::Binary(b) if b == &blob[..]));
            let back = tagged(&got[1], "back").expect("then erl's blob");
            let want = "fragment".repeat(400_000);
            assert!(matches!(back.view(), View::Binary(b) if b == want.as_bytes()));
            let order = tagged(&got[2], "order").expect("then the order");
            let mut seen = Vec::new();
            let mut l = order;
            while let View::Cons(x, rest) = l.view() {
                seen.push(match x.view() {
                    View::Keyword(_) => ("blob".to_string(), 0),
                    View::Vector(v) => match (v[0].view(), v[1].view()) {
                        (View::Keyword(k), View::Int(n)) => (k.name().to_string(), n),
                        other => panic!("{other:?}"),
                    },
                    other => panic!("{other:?}"),
                });
                l = rest;
            }
            seen
        })
        .unwrap();
    let (fin, fout) = d.fragmented();
    assert!(fin >= 2 && fout >= 1, "fragments in {fin}, out {fout}");
    // Each sender's messages in the order sent: ours the blob then
    // after_big 1..10, the other's small 1..200.
    let ours: Vec<_> = order
        .iter()
        .filter(|(k, _)| k != "small")
        .cloned()
        .collect();
    let mut want = vec![("blob".to_string(), 0)];
    want.extend((1..=10).map(|n| ("after_big".to_string(), n)));
    assert_eq!(ours, want);
    let smalls: Vec<i64> = order
        .iter()
        .filter(|(k, _)| k == "small")
        .map(|(_, n)| *n)
        .collect();
    assert_eq!(smalls, (1..=200).collect::<Vec<_>>());
    // The other sender did not wait for the whole 30 MB.
    let blob_at = order.iter().position(|(k, _)| k == "blob").unwrap();
    assert!(
        blob_at > 0,
        "no small message went between the fragments: {order:?}"
    );
}

#[test]
fn spawning_on_another_node_links_monitors_and_fails_clearly() {
    if !epmd_available() {
        return;
    }
    let (a, b, h) = (unique("la"), unique("lb"), host());
    let prog = r#"(ns user)
(defn worker [x y] (receive :go (exit [:done (+ x y)])))
(defn echo-back [to] (send to [:hello-from (node)]))
(defn -main [& args]
  (if (= (first args) "b")
    (do (println "ready") (receive :never nil))
    (let [b (keyword (second args))]
      (process-flag :trap-exit true)
      (let [p (spawn-link-on b 'user/worker 1 2)]
        (println "remote pid" (= (node p) b))
        (send p :go)
        (println "linked exit" (receive [:EXIT q r] :when (= q p) r :timeout 5000 :none)))
      (let [[p r] (spawn-monitor-on b 'user/worker 3 4)]
        (send p :go)
        (println "down" (receive [:DOWN t _ why] :when (= t r) why :timeout 5000 :none)))
      (spawn-on b 'user/echo-back (self))
      (println "echo" (= b (receive [:hello-from n] n :timeout 5000 :none)))
      (println "undef" (last (try (spawn-on b 'user/nope) (catch :error e e))))
      (println "noconn" (last (try (spawn-on :ghost@nowhere 'user/worker 1 2) (catch :error e e)))))))"#;
    let tmp = scratch();
    let dir = tmp.path();
    std::fs::write(dir.join("prog.lona"), prog).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.arg("run")
        .args(["--sname", &b, "--cookie", "c14"])
        .arg(dir.join("prog.lona"))
        .arg("b");
    let nb = Node::spawn(cmd);
    nb.expect("ready");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.arg("run")
        .args(["--sname", &a, "--cookie", "c14"])
        .arg(dir.join("prog.lona"))
        .args(["a", &format!("{b}@{h}")]);
    let mut na = Node::spawn(cmd);
    na.expect("remote pid true");
    na.expect("linked exit [:done 3]");
    na.expect("down [:done 7]");
    na.expect("echo true");
    na.expect("undef :undef");
    na.expect("noconn :noconnection");
    assert!(na.wait().success());
}

#[test]
fn erlang_spawns_on_a_lona_node() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(
        &l,
        "c15",
        r#"(ns user)
(defn greeter [to n] (send to [:greeting (* 2 n) (node)]))
(defn -main [] (println "ready") (receive :never nil))"#,
    );
    lona.expect("ready");
    let erl = Node::erl(
        &e,
        "c15",
        &format!(
            "P = spawn('{l}@{h}', user, greeter, [self(), 21]),
             io:format(\"~p~n\", [node(P)]),
             receive {{greeting, N, From}} -> io:format(\"greeting ~p ~p~n\", [N, From]) after 5000 -> io:format(\"none~n\") end,
             R = erlang:spawn_request('{l}@{h}', user, greeter, [self(), 1], [monitor]),
             receive {{spawn_reply, R, ok, Q}} -> io:format(\"spawned ~p~n\", [node(Q)]) end,
             receive {{'DOWN', R, process, _, Why}} -> io:format(\"down ~p~n\", [Why]) after 5000 -> io:format(\"nodown~n\") end,
             R2 = erlang:spawn_request('{l}@{h}', user, nope, [], [monitor]),
             receive {{spawn_reply, R2, error, Why2}} -> io:format(\"error ~p~n\", [Why2]) after 5000 -> io:format(\"noreply~n\") end,
             halt()."
        ),
    );
    erl.expect(&format!("{l}@{h}"));
    erl.expect(&format!("greeting 42 {l}@{h}"));
    erl.expect(&format!("spawned {l}@{h}"));
    erl.expect("down normal");
    erl.expect("error undef");
}

#[test]
fn a_silent_peer_is_down_after_the_net_tick_time() {
    if !epmd_available() {
        return;
    }
    // A node that stops (SIGSTOP) keeps its socket open but sends no
    // ticks: the other side declares it down after the net tick time.
    let (a, b, h) = (unique("la"), unique("lb"), host());
    let tmp = scratch();
    let dir = tmp.path();
    let prog = r#"(defn -main [& args]
  (if (= (first args) "b")
    (do (register :b (self)) (println "ready") (receive :never nil))
    (let [b (keyword (second args))]
      (println "connect" (connect-node b))
      (let [r (monitor [:b b])]
        (println "armed")
        (let [t0 (monotonic-ms)
              why (receive [:DOWN t _ why] :when (= t r) why :timeout 20000 :none)]
          (println "down" why (< (- (monotonic-ms) t0) 10000)))))))"#;
    std::fs::write(dir.join("p.lona"), prog).unwrap();
    let spawn = |name: &str, args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
        cmd.arg("run")
            .args(["--sname", name, "--cookie", "c16", "--net-ticktime", "2"])
            .arg(dir.join("p.lona"))
            .args(args);
        Node::spawn(cmd)
    };
    let nb = spawn(&b, &["b"]);
    nb.expect("ready");
    let peer = format!("{b}@{h}");
    let na = spawn(&a, &["a", &peer]);
    na.expect("connect true");
    na.expect("armed");
    // SAFETY: kill(2) with a pid we spawned; no memory is involved.
    unsafe { libc::kill(nb.child.id() as i32, libc::SIGSTOP) };
    na.expect("down :noconnection true");
    // SAFETY: as above.
    unsafe { libc::kill(nb.child.id() as i32, libc::SIGCONT) };
}
