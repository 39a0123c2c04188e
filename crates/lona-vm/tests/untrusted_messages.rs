//! Decoded outside data in a Lonala process (issue 17, defect 1): 11 bytes
//! used to decode into a function whose code word pointed anywhere, and the
//! process that printed the message crashed the node. Functions no longer
//! decode; every term that does decode is printed, compared, hashed, used
//! as a map key and sent on by a Lonala process, which must see it intact.

use std::time::{Duration, Instant};

use lona_runtime::Runtime;
use lona_term::{decode, DecodeError, Fragment, Heap, Term};
use lona_vm::process::Ending;
use lona_vm::{node, Env, Evaluator, SharedBuf, Source};

const SINK: &str = r#"
(register :sink (self))
(defn echo [] (receive [from v] (do (send from [:back v]) (echo))))
(def e (spawn echo))
(defn same? [m back]
  (and (= m back) (= back m) (= 0 (compare m back)) (= (hash m) (hash back))
       (= (pr-str m) (pr-str back)) (= (str m) (str back))
       (= :found (get {m :found} back)) (= 1 (count (conj [] m)))))
(defn handle [n bad]
  (receive
    :done [n bad]
    m (do (send e [(self) m])
          (let [back (receive [:back v] v)]
            (if (same? m back) (handle (inc n) bad) (handle (inc n) (inc bad)))))))
(println :handled (handle 0 0))
"#;

/// A small deterministic generator of grammar-shaped encodings (tags,
/// small counts, names that exist, numbers), so most inputs decode.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn term(&mut self, out: &mut Vec<u8>, depth: u32) {
        let pick = self.next() % if depth > 3 { 8 } else { 12 };
        match pick {
            0 => out.push((self.next() % 4) as u8),
            1 => {
                out.push(4);
                out.push((self.next() % 128) as u8);
            }
            2 => {
                out.push(6);
                out.extend_from_slice(&self.next().to_le_bytes());
            }
            3 => {
                let name = ["ok", "error", "normal", "EXIT"][(self.next() % 4) as usize];
                out.push(if self.next().is_multiple_of(2) { 7 } else { 8 });
                out.push(name.len() as u8);
                out.extend_from_slice(name.as_bytes());
            }
            4 => {
                let n = (self.next() % 80) as u8;
                out.push(if self.next().is_multiple_of(2) { 9 } else { 10 });
                out.push(n);
                out.extend(std::iter::repeat_n(b'x', n as usize));
            }
            5 => {
                out.push(15);
                out.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
            }
            6 => {
                out.push(16);
                out.push((self.next() % 128) as u8);
            }
            7 => {
                out.push(5);
                out.push((self.next() % 2) as u8);
                out.push(9);
                out.extend_from_slice(&self.next().to_le_bytes());
                out.push(1);
            }
            8 | 9 => {
                let n = self.next() % 4;
                out.push(11);
                out.push(n as u8);
                for _ in 0..n {
                    self.term(out, depth + 1);
                }
            }
            10 => {
                let n = 1 + self.next() % 3;
                out.push(12);
                out.push(n as u8);
                for _ in 0..=n {
                    self.term(out, depth + 1);
                }
            }
            _ => {
                out.push(13);
                out.push(1);
                self.term(out, depth + 1);
                self.term(out, depth + 1);
            }
        }
    }
}

#[test]
fn decoded_outside_data_is_safe_to_use_in_a_lonala_process() {
    // the reported input: decodes to nothing
    let h = Heap::new();
    let eleven = b"L\x01\x0e\x80\x80\x80\x80\x80\x80\x01\x00";
    assert_eq!(decode(&h, eleven), Err(DecodeError::Function));
    for n in ["ok", "error", "normal", "EXIT"] {
        Term::keyword(n);
    }

    // 400 generated inputs, some mutated; whatever decodes is sent
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let mut messages = Vec::new();
    for i in 0..400 {
        let mut bytes = vec![b'L', 1];
        g.term(&mut bytes, 0);
        if i % 4 == 3 {
            let at = 2 + (g.next() as usize) % (bytes.len() - 2);
            bytes[at] = (g.next() % 17) as u8;
        }
        let heap = Heap::new();
        if let Ok(t) = decode(&heap, &bytes) {
            messages.push(Fragment::new(t));
        }
    }
    let sent = messages.len();
    assert!(sent > 200, "only {sent} of 400 inputs decoded");

    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new("sink.lona", SINK))
        .expect("reads");
    let rt = Runtime::builder().workers(2).build().expect("runtime");
    let handle = rt.handle();
    let feeder = std::thread::spawn(move || {
        let t = Instant::now();
        let sink = loop {
            if let Some(p) = handle.whereis("sink") {
                break p;
            }
            assert!(t.elapsed() < Duration::from_secs(30), "no sink");
            std::thread::sleep(Duration::from_millis(1));
        };
        for m in messages {
            handle.send(sink, m);
        }
        handle.send(sink, Fragment::new(Term::keyword("done")));
    });
    let ending = node::run_main_on(rt, &env, ev).expect("node runs");
    feeder.join().expect("feeder");
    assert_eq!(ending, Ending::Normal, "{}", buf.text());
    assert_eq!(buf.text(), format!(":handled [{sent} 0]\n"));
}
