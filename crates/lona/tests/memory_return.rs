//! Memory goes back to the system once the node is idle (issue 36,
//! point 7): after a process that grew a 300 MB heap ends, and after a
//! runaway recursion that grew its stack to the limit ends, the node's
//! resident memory falls back near where it started within seconds of
//! idling. Before, it stayed at its peak for good: freed heap blocks sat
//! in the node's block cache, and mimalloc purges the pages a thread freed
//! only when that thread calls into it again, which an idle worker never
//! does (the runtime's idle hook, `lona`'s `give_back_memory`).

use std::process::Command;

const PROGRAM: &str = r#"
(defn mb [] (quot (memory) 1048576))
(defn build [n acc] (if (= n 0) acc (build (dec n) (cons n acc))))
(defn deep [n] (if (= n 0) 0 (+ 1 (deep (dec n)))))

(defn settle
  "Waits (up to 30 s, idle: a worker gives back after a second without
  work) for the node to fall under `limit` MB; its resident MB then."
  [limit]
  (loop [i 0]
    (let [m (mb)]
      (if (or (< m limit) (> i 20)) m (do (sleep 1500) (recur (inc i)))))))

(defn -main [& args]
  (let [start (mb)
        limit (+ start 64)]
    (let [me (self)
          [_ r] (spawn-monitor (fn [] (let [l (build 12000000 ())] (send me [:peak (mb)]) (count l))))]
      (receive [:peak peak] (println "grew by at least 200 MB:" (> peak (+ start 200))))
      (receive [:DOWN _ _ x] (println "heap process:" x)))
    (println "heap freed:" (< (settle limit) limit))
    (let [[_ r] (spawn-monitor (fn [] (deep 100000000)))]
      (receive [:DOWN _ _ x] (println "runaway process:" x)))
    (println "stack freed:" (< (settle limit) limit))))
"#;

#[test]
fn an_idle_node_gives_freed_memory_back() {
    let dir = tempfile::Builder::new()
        .prefix("lona-memory-return-")
        .tempdir()
        .unwrap();
    let file = dir.path().join("memory_return.lona");
    std::fs::write(&file, PROGRAM).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lona"))
        .arg("run")
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "grew by at least 200 MB: true",
            "heap process: :normal",
            "heap freed: true",
            "runaway process: [:error :system-limit]",
            "stack freed: true",
        ],
        "{stderr}"
    );
}
