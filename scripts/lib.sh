# Sourced by scripts/*: common helpers.
# uv may have been installed by pip moments ago (pyenv shims not rehashed yet): fall back to `python3 -m uv`.
if ! command -v uv >/dev/null 2>&1; then
  uv() { python3 -m uv "$@"; }
fi
