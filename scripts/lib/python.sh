# A Python virtual environment for the test tools that come from PyPI; sourced by scripts/test.
#
# herald_venv: creates .venv-test/ (ignored by git) with the packages pinned in
# scripts/requirements-test.txt, reinstalling only when that file changes, and exports
# HERALD_PYTHON (the venv's interpreter) and puts the venv's bin/ first on PATH.

herald_venv() {
  local root venv stamp want
  root=$(pwd)
  venv="$root/.venv-test"
  want=$(sha256sum "$root/scripts/requirements-test.txt" | cut -d' ' -f1)
  stamp="$venv/.requirements-sha256"
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setting up the test tools' Python environment in .venv-test/" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$root/scripts/requirements-test.txt"
    echo "$want" > "$stamp"
  fi
  HERALD_PYTHON="$venv/bin/python"
  export HERALD_PYTHON
  PATH="$venv/bin:$PATH"
  export PATH
}
