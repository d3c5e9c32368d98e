# Sourced by device scripts: unpacks the carried kiln binary, sets $OUT (the
# folder whose files come back), $KILN, $LIB (the runtime library) and the
# kernel cache (a script may name its own), and names the GPU.
# (Some older device scripts still spell this out themselves.)
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT" /tmp/kiln-bin
gunzip -c .device/kiln.gz > /tmp/kiln-bin/kiln && chmod +x /tmp/kiln-bin/kiln
KILN=/tmp/kiln-bin/kiln
LIB=$PWD/.device/libkiln_runtime.so
export KILN_CACHE_DIR=${KILN_CACHE_DIR:-/tmp/kiln-cache}
nvidia-smi -L
