//! The compiler: Cranelift's settings, a context to compile in, and the
//! code heap compiled code is installed into.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, OnceLock};

use super::{code_heap, CODE_BYTES};

/// Address space reserved for machine code (not memory: chunks are
/// mapped as code fills them).
const CODE_RESERVE: usize = 1 << 30;

/// Functions of more IR instructions than this are compiled without
/// Cranelift's optimiser (its e-graph pass and alias analysis): it took a
/// quarter of their compile time (`map-eager`, ~490 instructions: 0.94 ->
/// 0.70 ms) and gained nothing measurable in their running time (`lists`,
/// `strings`, `sort`, `maps`: calls and allocation), where `fib` (~190)
/// ran 6% slower without it. Small functions compile within a fraction
/// of a millisecond either way.
pub(super) const OPTIMISED_INSTS: usize = 256;

/// How the code of a function names itself (its calls of itself): the
/// one relocation in its machine code.
pub(super) const SELF: cranelift_codegen::ir::UserExternalName =
    cranelift_codegen::ir::UserExternalName {
        namespace: 0,
        index: 0,
    };

/// A code generator: Cranelift's settings and a context to translate
/// and compile one function in. The compiler has one; so has the
/// optimiser (`optimise.rs`), which compiles outside the compiler's lock
/// and takes it only to install.
pub(super) struct Codegen {
    /// Cranelift with its optimiser (`opt_level=speed`), for functions
    /// of at most [`OPTIMISED_INSTS`] IR instructions.
    pub isa: cranelift_codegen::isa::OwnedTargetIsa,
    /// Without it (`opt_level=none`), for larger ones.
    pub isa_big: cranelift_codegen::isa::OwnedTargetIsa,
    /// The quick tier's (`optimise.rs`): no optimiser, and the single-pass
    /// register allocator instead of the backtracking one.
    pub isa_quick: cranelift_codegen::isa::OwnedTargetIsa,
    pub ctx: cranelift_codegen::Context,
    pub fctx: cranelift_frontend::FunctionBuilderContext,
    pub count: u64,
}

/// The compiler: the code generator functions found hot are compiled
/// with (the optimiser has one of its own: `optimise.rs`), and the code
/// heap all code goes to (`code.rs`), behind a lock (compiles are rare).
/// Code is freed with its prototypes (`free_codes`, a batch at a time),
/// and quick code once replaced and no longer running (`free_retired`).
pub(super) struct Compiler {
    pub gen: Codegen,
    pub heap: code_heap::CodeHeap,
}

/// The compiler, made at first use (`None`: Cranelift does not support
/// this machine).
pub(super) fn compiler() -> &'static Mutex<Option<Compiler>> {
    static C: OnceLock<Mutex<Option<Compiler>>> = OnceLock::new();
    C.get_or_init(|| {
        Mutex::new(match Compiler::new() {
            Ok(c) => Some(c),
            Err(e) => {
                if std::env::var_os("LONA_JIT_LOG").is_some() {
                    eprintln!("jit: no compiler: {e}");
                }
                None
            }
        })
    })
}

impl Codegen {
    /// Settings for this machine, and an empty context.
    pub fn new() -> Result<Codegen, String> {
        Ok(Codegen {
            isa: Codegen::isa("speed", "backtracking")?,
            isa_big: Codegen::isa("none", "backtracking")?,
            isa_quick: Codegen::isa("none", "single_pass")?,
            ctx: cranelift_codegen::Context::new(),
            fctx: cranelift_frontend::FunctionBuilderContext::new(),
            count: 0,
        })
    }

    /// Empties the context after a compile that panicked.
    pub fn reset(&mut self) {
        self.ctx.clear();
        self.fctx = cranelift_frontend::FunctionBuilderContext::new();
    }

    /// The target, with Cranelift's `opt_level` `opt` and register
    /// allocator `regalloc`.
    fn isa(opt: &str, regalloc: &str) -> Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
        use cranelift_codegen::settings::{self, Configurable};
        let mut flags = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| {
            f.set(k, v).map_err(|e| format!("{k}: {e}"))
        };
        set(&mut flags, "opt_level", opt)?;
        set(&mut flags, "regalloc_algorithm", regalloc)?;
        set(&mut flags, "preserve_frame_pointers", "true")?;
        set(&mut flags, "is_pic", "false")?;
        // Cranelift's IR verifier: in debug builds (every test run), where
        // it catches a translation bug at its source; a release build
        // spends 40% of its compile time in it.
        set(
            &mut flags,
            "enable_verifier",
            if cfg!(debug_assertions) {
                "true"
            } else {
                "false"
            },
        )?;
        // Cranelift settings by hand, for measuring (`LONA_JIT_FLAGS`:
        // `name=value` pairs, comma-separated, over the above).
        if let Ok(more) = std::env::var("LONA_JIT_FLAGS") {
            for kv in more.split(',').filter(|kv| !kv.is_empty()) {
                let (k, v) = kv.split_once('=').unwrap_or((kv, "true"));
                set(&mut flags, k.trim(), v.trim())?;
            }
        }
        cranelift_native::builder()
            .map_err(|e| e.to_string())?
            .finish(settings::Flags::new(flags))
            .map_err(|e| e.to_string())
    }
}

impl Compiler {
    fn new() -> Result<Compiler, String> {
        let gen = Codegen::new()?;
        // All machine code in one reserved range of address space, a few
        // kernel mappings in all (a mapping per function once hit Linux's
        // 65,530 after 32,741 compiled functions, and then allocation
        // failed). Past the range, compiles fail and functions stay
        // interpreted.
        let heap = code_heap::CodeHeap::new(CODE_RESERVE)
            .map_err(|e| format!("reserving code space: {e}"))?;
        Ok(Compiler { gen, heap })
    }

    /// Copies the function just compiled in `gen` (its `ctx`; the
    /// compiler's own or the optimiser's) into the code heap and
    /// patches its relocations: its address and size. Its calls of itself
    /// are the only relocations there are (helpers, vars, prototypes and
    /// constants are absolute addresses in the code: `iconst`,
    /// `call_indirect`); its constants and jump tables are in the same
    /// buffer, reached PC-relatively, resolved by Cranelift. Any other
    /// relocation is refused: the function stays interpreted.
    pub fn install(
        heap: &mut code_heap::CodeHeap,
        gen: &Codegen,
    ) -> Result<(usize, usize), String> {
        use cranelift_codegen::binemit::Reloc;
        use cranelift_codegen::ir::ExternalName;
        use cranelift_codegen::FinalizedRelocTarget as To;
        let func = &gen.ctx.func;
        let made = gen.ctx.compiled_code().ok_or("nothing compiled")?;
        let bytes = made.code_buffer();
        let relocs = made.buffer.relocs();
        let align = (made.buffer.alignment as usize)
            .max(gen.isa.function_alignment().minimum as usize)
            .max(gen.isa.symbol_alignment() as usize);
        if align > code_heap::GRAIN {
            return Err(format!("code aligned to {align} bytes"));
        }
        // Where each relocation points, from the function's start.
        let mut at_self = Vec::with_capacity(relocs.len());
        for r in relocs {
            let target = match &r.target {
                To::Func(off) => Some(*off as i64),
                To::ExternalName(ExternalName::User(u)) => {
                    (func.params.user_named_funcs()[*u] == SELF).then_some(0)
                }
                _ => None,
            };
            let known = matches!(
                r.kind,
                Reloc::X86CallPCRel4 | Reloc::X86PCRel4 | Reloc::Arm64Call
            );
            match target {
                Some(t) if known && r.offset as usize + 4 <= bytes.len() => {
                    at_self.push((r.kind, r.offset as usize, t + r.addend))
                }
                _ => {
                    return Err(format!(
                        "relocation {:?} at {} to {}: not handled",
                        r.kind,
                        r.offset,
                        r.target.display(Some(&func.params))
                    ))
                }
            }
        }
        let (rx, rw) = heap.alloc(bytes.len()).ok_or("the code space is full")?;
        // SAFETY: `alloc` gave `bytes.len()` writable bytes at `rw`, ours
        // alone until published.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), rw, bytes.len()) };
        for (kind, off, target) in at_self {
            // From the patched place to the target, as it will run.
            let delta = target - off as i64;
            // SAFETY: `off + 4` is within the code just written (checked
            // above); unaligned accesses, as relocations may be.
            let ok = unsafe {
                let p = rw.add(off);
                match kind {
                    Reloc::X86CallPCRel4 | Reloc::X86PCRel4 => match i32::try_from(delta) {
                        Ok(d) => {
                            p.cast::<i32>().write_unaligned(d);
                            true
                        }
                        Err(_) => false,
                    },
                    // `bl`: a signed 26-bit offset in instructions.
                    _ => {
                        let d = delta >> 2;
                        let fits = (-(1 << 25)..1 << 25).contains(&d);
                        let inst = p.cast::<u32>().read_unaligned();
                        p.cast::<u32>()
                            .write_unaligned(inst | (d as u32 & 0x03ff_ffff));
                        fits
                    }
                }
            };
            if !ok {
                // SAFETY: just allocated, never published.
                unsafe { heap.free(rx, bytes.len()) };
                return Err(format!("relocation {kind:?} out of range"));
            }
        }
        // SAFETY: the range `alloc` gave, written.
        unsafe { heap.finish(rx, bytes.len()) };
        CODE_BYTES.fetch_add(bytes.len(), Relaxed);
        Ok((rx as usize, bytes.len()))
    }
}

/// The code heap's extent in bytes (tests: the whitebox tests of the
/// code heap's reuse).
#[cfg(any(test, feature = "whitebox"))]
pub fn heap_extent() -> usize {
    let c = compiler().lock().unwrap_or_else(|e| e.into_inner());
    c.as_ref().map_or(0, |c| c.heap.extent())
}
