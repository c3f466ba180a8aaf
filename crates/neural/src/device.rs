//! Where the neural debugger computes: one helper chooses the device for training,
//! inference and evaluation alike.
//!
//! CPU builds everywhere; `--features cuda` links candle's CUDA kernels (needs nvcc at
//! build time and the CUDA libraries at run time), so a CUDA build is a separate binary.

use candle_core::Device;

/// The `--device` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DeviceChoice {
    /// The first CUDA GPU when this build has CUDA support and one opens, else the CPU.
    #[default]
    Auto,
    Cpu,
    Cuda,
}

/// The chosen device cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error(
        "this build has no CUDA support; rebuild with `cargo build --release --features cuda` (needs nvcc), or pass --device cpu"
    )]
    NotBuilt,
    #[error("CUDA GPU 0 cannot be opened ({0}); check the driver with nvidia-smi, or pass --device cpu")]
    Unavailable(String),
}

/// The device for `choice`.
pub fn choose(choice: DeviceChoice) -> Result<Device, DeviceError> {
    let cuda = || Device::new_cuda(0).map_err(|e| DeviceError::Unavailable(e.to_string()));
    let built = candle_core::utils::cuda_is_available();
    match choice {
        DeviceChoice::Cuda if built => cuda(),
        DeviceChoice::Cuda => Err(DeviceError::NotBuilt),
        DeviceChoice::Auto if built => Ok(cuda().unwrap_or(Device::Cpu)),
        DeviceChoice::Cpu | DeviceChoice::Auto => Ok(Device::Cpu),
    }
}

/// A short name for logs and reports.
pub fn describe(device: &Device) -> &'static str {
    if device.is_cuda() { "cuda" } else { "cpu" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_always_available_and_auto_falls_back_to_it() {
        assert!(choose(DeviceChoice::Cpu).unwrap().is_cpu());
        let auto = choose(DeviceChoice::Auto).unwrap();
        assert_eq!(
            auto.is_cuda(),
            candle_core::utils::cuda_is_available() && auto.is_cuda()
        );
        if !candle_core::utils::cuda_is_available() {
            assert!(auto.is_cpu());
            assert!(matches!(choose(DeviceChoice::Cuda), Err(DeviceError::NotBuilt)));
        }
    }
}
