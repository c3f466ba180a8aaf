//! Entry point of the wasm binary: installs the panic hook and mounts the app.

fn main() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        replayground_frontend::playground::app::show_crash_notice();
    }));
    leptos::mount::mount_to_body(replayground_frontend::App);
}
