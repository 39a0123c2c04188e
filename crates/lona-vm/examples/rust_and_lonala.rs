//! A Rust program embedding Lonala: a Rust built-in, a Lonala server
//! process, and a native Rust process talking to it with serde values.
//!
//! `cargo run -p lona-vm --example rust_and_lonala`

use lona_runtime::Runtime;
use lona_term::Fragment;
use lona_vm::bridge::{from_message, to_message, PidTerm};
use lona_vm::process::LonaProcess;
use lona_vm::{eval_str, Env};
use serde::{Deserialize, Serialize};

/// What the Rust side asks: `[:area {:shape ... :reply-to pid}]` in Lonala.
#[derive(Serialize)]
enum Request {
    Area { shape: Shape, reply_to: PidTerm },
}

/// `[:circle {:r 2.0}]` or `[:rect 2.0 3.0]` in Lonala.
#[derive(Serialize)]
enum Shape {
    Circle { r: f64 },
    Rect(f64, f64),
}

/// What the Lonala server answers: `[:ok area]` or `[:error reason]`.
#[derive(Deserialize, Debug, PartialEq)]
enum Reply {
    Ok(f64),
    Error(String),
}

const SERVER: &str = r#"
(ns geo)

(defn area [shape]
  (match shape
    [:circle {:r r}] (* (pi) r r)       ; `pi` is the Rust built-in below
    [:rect w h]      (* w h)))

(defn server []
  (receive
    [:area {:shape s :reply-to from}]
      (do (send from (try [:ok (area s)] (catch :error e [:error (str e)])))
          (server))
    :stop :ok))
"#;

fn main() {
    let env = Env::stdout();
    // A Rust function as a Lonala built-in: `(geo/pi)`.
    env.define_native("geo", "pi", 0, 0, |cx, _args| {
        Ok(cx.heap().float(std::f64::consts::PI))
    });
    eval_str(&env, "geo.lona", SERVER).expect("the server compiles");

    let rt = Runtime::new().expect("runtime");
    let no_args = to_message(&()).expect("serializes");
    let server = rt
        .handle()
        .spawn_process(LonaProcess::call(env.clone(), "geo/server", &no_args).expect("defined"))
        .expect("spawns");

    let replies = rt
        .block_on(move |ctx| async move {
            let me = PidTerm(ctx.pid());
            let mut replies = Vec::new();
            for shape in [Shape::Circle { r: 2.0 }, Shape::Rect(2.0, 3.0)] {
                let req = Request::Area {
                    shape,
                    reply_to: me,
                };
                ctx.send(server, to_message(&req).expect("serializes"))
                    .await;
                let reply: Fragment = ctx.receive().await;
                replies.push(from_message::<Reply>(&reply).expect("a reply"));
            }
            ctx.send(server, to_message(&Control::Stop).expect("serializes"))
                .await;
            replies
        })
        .expect("the Rust process ends normally");
    for r in &replies {
        println!("{r:?}");
    }
    rt.shutdown();
}

/// `:stop` (a unit variant is a keyword).
#[derive(Serialize)]
enum Control {
    Stop,
}
