# bench/calls: sourced by the convolution calls (c7, c9). kb_start STEM DIR: imports KernelBench
# file $KB/STEM.py into DIR/specs and writes the planner's start program with `kforge export
# --no-build` into DIR/exp (program.kf, spec.json); returns non-zero, with a line in
# $R/steps.txt, where there is none. Uses $K (kforge), $KB and $R.
kb_start() {
    local s=$1 d=$2 spec
    timeout 120 "$K" import kernelbench "$KB/$s.py" -o $d/specs --allow-degenerate > $d/import.txt 2>&1
    spec=$(ls $d/specs/*.json 2>/dev/null | head -1)
    timeout 120 "$K" export "$spec" -o $d/exp --no-build > $d/export.txt 2>&1
    [ -f $d/exp/program.kf ] || { echo "$(basename $s): no start program" >> $R/steps.txt; return 1; }
}
