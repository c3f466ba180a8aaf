//! The seccomp filter every sandboxed program runs under (bubblewrap's `--seccomp FD`).
//!
//! Namespaces, a non-root uid and dropped capabilities already stop most dangerous
//! system calls; this filter refuses, with `EPERM`, the ones that stay reachable for an
//! unprivileged process and have been the kernel's largest attack surface: `io_uring`,
//! the keyrings, eBPF, userfaultfd, perf events, ptrace and cross-process memory access,
//! plus module and kexec loading and `open_by_handle_at`. A program for another
//! architecture (or the x32 ABI) is killed. The filter is a fixed classic BPF program,
//! written here rather than built with libseccomp, so the server needs no C library.

use std::io::{Seek as _, SeekFrom, Write as _};

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;
/// `struct seccomp_data`: the system call number, then the audit architecture.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_ALLOW: u32 = 0x7fff_0000;
const EPERM: u32 = 1;

#[cfg(target_arch = "x86_64")]
mod arch {
    pub(super) const AUDIT_ARCH: u32 = 0xc000_003e;
    /// x32 system calls carry this bit; they are refused as a whole.
    pub(super) const X32_BIT: Option<u32> = Some(0x4000_0000);
    pub(super) const DENIED: &[u32] = &[
        425, 426, 427, // io_uring_setup, io_uring_enter, io_uring_register
        248, 249, 250, // add_key, request_key, keyctl
        321, // bpf
        323, // userfaultfd
        298, // perf_event_open
        101, // ptrace
        310, 311, // process_vm_readv, process_vm_writev
        175, 313, 176, // init_module, finit_module, delete_module
        246, 320, // kexec_load, kexec_file_load
        304, // open_by_handle_at
    ];
}

#[cfg(target_arch = "aarch64")]
mod arch {
    pub(super) const AUDIT_ARCH: u32 = 0xc000_00b7;
    pub(super) const X32_BIT: Option<u32> = None;
    pub(super) const DENIED: &[u32] = &[
        425, 426, 427, // io_uring_setup, io_uring_enter, io_uring_register
        217, 218, 219, // add_key, request_key, keyctl
        280, // bpf
        282, // userfaultfd
        241, // perf_event_open
        117, // ptrace
        270, 271, // process_vm_readv, process_vm_writev
        105, 273, 106, // init_module, finit_module, delete_module
        104, 294, // kexec_load, kexec_file_load
        265, // open_by_handle_at
    ];
}

/// One classic BPF instruction (`struct sock_filter`).
fn op(code: u16, jt: u8, jf: u8, k: u32) -> [u8; 8] {
    let mut bytes = [0u8; 8];
    bytes[..2].copy_from_slice(&code.to_ne_bytes());
    bytes[2] = jt;
    bytes[3] = jf;
    bytes[4..].copy_from_slice(&k.to_ne_bytes());
    bytes
}

/// The filter as bubblewrap reads it: `struct sock_filter` entries, native byte order.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[allow(clippy::unnecessary_wraps)] // `None` on other architectures
pub(crate) fn program() -> Option<Vec<u8>> {
    let mut ops = vec![
        op(LD_W_ABS, 0, 0, ARCH_OFFSET),
        op(JEQ_K, 1, 0, arch::AUDIT_ARCH),
        op(RET_K, 0, 0, RET_KILL_PROCESS),
        op(LD_W_ABS, 0, 0, NR_OFFSET),
    ];
    // Each check jumps to the EPERM return, which follows the final ALLOW.
    let checks = usize::from(arch::X32_BIT.is_some()) + arch::DENIED.len();
    let to_deny = |index: usize| u8::try_from(checks - index).expect("a short filter");
    let mut index = 0;
    if let Some(bit) = arch::X32_BIT {
        ops.push(op(JGE_K, to_deny(index), 0, bit));
        index += 1;
    }
    for &nr in arch::DENIED {
        ops.push(op(JEQ_K, to_deny(index), 0, nr));
        index += 1;
    }
    ops.push(op(RET_K, 0, 0, RET_ALLOW));
    ops.push(op(RET_K, 0, 0, RET_ERRNO | EPERM));
    Some(ops.concat())
}

/// No filter is written for other architectures; the README says so.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) fn program() -> Option<Vec<u8>> {
    None
}

/// An unnamed file holding the filter, read from its start: bubblewrap reads it from the
/// fd it inherits, so each job needs its own.
pub(crate) fn filter_file() -> std::io::Result<Option<std::fs::File>> {
    let Some(program) = program() else {
        return Ok(None);
    };
    let mut file = tempfile::tempfile()?;
    file.write_all(&program)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn every_jump_lands_on_the_eperm_return() {
        let program = program().unwrap();
        let ops: Vec<&[u8]> = program.chunks(8).collect();
        let deny = ops.len() - 1;
        assert_eq!(
            u32::from_ne_bytes(ops[deny][4..].try_into().unwrap()),
            RET_ERRNO | EPERM
        );
        for (i, op) in ops.iter().enumerate().skip(4).take(deny - 5) {
            assert_eq!(i + 1 + usize::from(op[2]), deny, "instruction {i}");
        }
    }
}
