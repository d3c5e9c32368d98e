# Shared by the GPU suites: `run DESCRIPTION ARGS...` runs
# `kiln run ARGS --backend cuda --check`, prints PASS/FAIL with every
# relative L2 error the check printed (O, LSE, then dQ, dK, dV with
# --backward), and counts; `summary` prints the totals and sets the exit status.
# Expects KILN to be set.
pass=0; fail=0; failed=()

run() { # description, then kiln run arguments
  local what=$1; shift
  local out rc errs
  out=$("$KILN" run "$@" --backend cuda --check 2>&1); rc=$?
  errs=$(printf '%s\n' "$out" | sed -n 's/.*rel L2 err \([0-9.e+-]*\).*/\1/p' | paste -sd/ -)
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1)); printf 'PASS  rel_err=%-40s %s\n' "${errs:-?}" "$what"
  else
    fail=$((fail + 1)); failed+=("$what")
    printf 'FAIL  rc=%d rel_err=%-40s %s\n' $rc "${errs:-?}" "$what"
    printf '%s\n' "$out" | tail -n 10 | sed 's/^/      /'
  fi
}

summary() {
  echo "summary: $pass passed, $fail failed"
  for f in "${failed[@]}"; do echo "  failed: $f"; done
  [ $fail -eq 0 ]
}
