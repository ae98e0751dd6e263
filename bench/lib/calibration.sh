# shellcheck shell=bash
# Sourced by the bench scripts that pass a calibration to `kforge report` or read one:
#   cal_file  prints bench/calibration/<key>.json for the GPU nvidia-smi names (an H200: h200,
#             an H100: h100-sxm) when that file is committed, else nothing - `kforge report`
#             refuses a calibration measured on another device (an H100 run with h200.json ended
#             "report rc=2" in session 23), and without one it takes the datasheet's ceilings.
# Needs R (the repository root).
cal_file() {
    local name key
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    case "$name" in
        *H200*) key=h200 ;;
        *H100*) key=h100-sxm ;;
        *) return 0 ;;
    esac
    [ -f "$R/bench/calibration/$key.json" ] && echo "$R/bench/calibration/$key.json"
    return 0
}
