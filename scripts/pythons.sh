# Sourced by the scripts: stagepy_pythons prints the CPython interpreters to build and
# test with, one per supported minor version found (STAGEPY_PYTHONS overrides).
stagepy_pythons() {
  if [ -n "${STAGEPY_PYTHONS:-}" ]; then echo "$STAGEPY_PYTHONS"; return; fi
  local root found=()
  root="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"
  for minor in 3.11 3.12 3.13; do
    local cand=""
    for d in $(ls -d "$root"/versions/"$minor".* 2>/dev/null | sort -V -r); do
      if [ -x "$d/bin/python" ]; then cand="$d/bin/python"; break; fi
    done
    if [ -z "$cand" ] && command -v "python$minor" >/dev/null; then cand="$(command -v "python$minor")"; fi
    if [ -n "$cand" ]; then found+=("$cand"); fi
  done
  echo "${found[@]}"
}
