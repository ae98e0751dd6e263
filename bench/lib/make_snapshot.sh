#!/usr/bin/env bash
# .snapshot.tar.xz: the committed tree (git archive of HEAD, or of REV) for a device call.
# A device call copies the working tree as it is, with whatever engineers are editing: one run
# compiled kernels against a half-edited header (host ABI 2 vs the carried binary's 1) and every
# nvcc export failed (2026-12-06). Carry .snapshot.tar.xz and .carry.tar.xz, and on the device:
#   mkdir -p /tmp/snap && tar xJf .snapshot.tar.xz -C /tmp/snap && tar xJf .carry.tar.xz -C /tmp/snap
#   cd /tmp/snap && bash bench/...             (the binary and the tree of the same commit)
#   bash bench/lib/make_snapshot.sh [REV]      (default HEAD)
set -euo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
REV=${1:-HEAD}
git -C "$R" archive --format=tar "$REV" | xz -T2 -3 > "$R/.snapshot.tar.xz"
echo "make_snapshot: $(git -C "$R" rev-parse --short "$REV") packed $(du -sh "$R/.snapshot.tar.xz" | cut -f1) in $R/.snapshot.tar.xz"
