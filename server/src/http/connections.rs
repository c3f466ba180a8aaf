//! Admission of TCP connections: at most so many per client address and in all, so that
//! idle or silent clients cannot use up the server's file descriptors.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Counts open connections per address; [`Admitted`] gives a place back when dropped.
#[derive(Debug, Clone)]
pub(crate) struct Admission {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    per_ip: usize,
    total: usize,
    open: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    by_ip: HashMap<IpAddr, usize>,
    total: usize,
}

/// One admitted connection.
#[derive(Debug)]
pub(crate) struct Admitted {
    inner: Arc<Inner>,
    ip: IpAddr,
}

impl Admission {
    pub(crate) fn new(per_ip: usize, total: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                per_ip: per_ip.max(1),
                total: total.max(1),
                open: Mutex::new(Counts::default()),
            }),
        }
    }

    /// A place for a connection from `ip`, or `None` when it or the server is at its cap.
    pub(crate) fn admit(&self, ip: IpAddr) -> Option<Admitted> {
        let mut open = self
            .inner
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let from_ip = open.by_ip.get(&ip).copied().unwrap_or(0);
        if from_ip >= self.inner.per_ip || open.total >= self.inner.total {
            return None;
        }
        open.by_ip.insert(ip, from_ip + 1);
        open.total += 1;
        Some(Admitted {
            inner: Arc::clone(&self.inner),
            ip,
        })
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self
            .inner
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        open.total -= 1;
        if let Some(n) = open.by_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.by_ip.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_address_and_in_all_and_frees_on_drop() {
        let admission = Admission::new(2, 3);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let first = admission.admit(a).unwrap();
        let _second = admission.admit(a).unwrap();
        assert!(admission.admit(a).is_none(), "a third from one address");
        let _other = admission.admit(b).unwrap();
        assert!(admission.admit(b).is_none(), "the server's total");
        drop(first);
        assert!(admission.admit(a).is_some());
    }
}
