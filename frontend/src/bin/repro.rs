//! Entry point of the reproduction page's wasm bundle (`repro.html`): installs the panic
//! hook and mounts the page. Only `replayground_frontend::repro` is reachable from here,
//! so the linker leaves the playground's tree-sitter out of this bundle.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(replayground_frontend::repro::ReproApp);
}
