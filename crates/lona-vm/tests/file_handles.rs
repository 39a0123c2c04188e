//! File handles close with their owner, however it ends: counted in the
//! OS process's open descriptors (`/proc/self/fd`) that name the two files
//! the program opens. Only those: the node opens descriptors of its own
//! whenever it likes (the compiling tier's code heap is a `memfd` made at
//! the first compile, which a busy machine reaches at another moment).
//! Its own test binary, so no other test opens or closes those meanwhile.

use lona_runtime::Runtime;
use lona_vm::process::Ending;
use lona_vm::{node, Env, Evaluator, SharedBuf, Source};

/// `(t/fds)`: how many descriptors this OS process has open on the files
/// the program opens (`/proc/<pid>/status`, `/dev/null`).
fn fds<'h>(
    cx: &mut lona_vm::NativeCall<'h, '_>,
    _a: &[lona_term::Term<'h>],
) -> Result<lona_term::Term<'h>, lona_vm::Exception<'h>> {
    let status = format!("/proc/{}/status", std::process::id());
    let n = std::fs::read_dir("/proc/self/fd")
        .map_err(|_| lona_vm::Exception::badarg())?
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|t| t.as_os_str() == "/dev/null" || t.as_os_str() == status.as_str())
        .count();
    Ok(cx.heap().int(n as i64))
}

const PROGRAM: &str = r#"
(def path "/proc/self/status")

(defn settle
  "Waits (up to 5 s) for the descriptors to number `n`: a handle closes
  when its watcher hears of its owner's end, a moment later. The count
  found."
  [n]
  (loop [i 0]
    (let [k (t/fds)]
      (if (or (= k n) (> i 500)) k (do (sleep 10) (recur (inc i)))))))

(defn opener
  "A process that opens three handles, reads from one, says so, and on
  :go calls `then`."
  [then]
  (let [me (self)]
    (spawn (fn []
             (let [fs (doall (for [_ (range 3)] (second (file/open path [:read]))))]
               (file/read (first fs) 10)
               (send me [:opened (self)])
               (receive :go (then)))))))

(def base (t/fds))

(doseq [[how then] [[:normal (fn [] :done)]
                    [:crash (fn [] (error :boom))]
                    [:kill (fn [] (receive :never nil))]]]
  (let [p (opener then)]
    (receive [:opened q] :when (= q p) :ok)
    (println how :open (- (t/fds) base))
    (if (= how :kill) (exit p :kill) (send p :go))
    (println how :after (- (settle base) base))))

;; Owners that end with work still queued or running on their handles:
;; an open not yet answered, and a hundred reads and writes.
(let [me (self)
      ps (doall (for [_ (range 20)]
                  (spawn (fn []
                           (file/open* path [:read])
                           (let [[_ f] (file/open "/dev/null" [:write])]
                             (dotimes [_ 100] (file/write* f "x") (file/read* f 1)))
                           (send me :queued)))))]
  (dotimes [_ 20] (receive :queued :ok))
  (println :queued :after (- (settle base) base)))

(println :handles (file/open-count))
"#;

#[test]
fn handles_close_with_their_owner_however_it_ends() {
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    env.define_native("t", "fds", 0, 0, fds);
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new("t.lona", PROGRAM))
        .expect("reads");
    let rt = Runtime::builder().workers(2).build().expect("runtime");
    let ending = node::run_main_on(rt, &env, ev).expect("node runs");
    let out = buf.text();
    assert_eq!(ending, Ending::Normal, "{out}");
    assert_eq!(
        out,
        ":normal :open 3\n:normal :after 0\n\
         :crash :open 3\n:crash :after 0\n\
         :kill :open 3\n:kill :after 0\n\
         :queued :after 0\n\
         :handles 0\n"
    );
}
