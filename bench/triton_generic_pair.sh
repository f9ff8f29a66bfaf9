#!/bin/bash
# per-shape (OLD: a checkout whose Triton printer bakes the sizes, e.g. main before issue 26) and
# generic (this checkout) Triton files of the heuristic's config per suite shape
OLD=${OLD:-/work/main}
set -e
cd "$(dirname "$0")/.."
HERE=$PWD
. /work/main/.venv/bin/activate
mkdir -p scratch/old scratch/new
python3 - <<'PY' > scratch/shapes.txt
import json
for s in json.load(open('/work/shared/bench/suite.json'))['shapes']:
    print(s['name'], s['M'], s['N'], s['K'])
PY
while read name M N K; do
  (cd $OLD && PYTHONPATH=$OLD TILEC_CACHE=/tmp/tc_main timeout 300 python -c "from tilec.app.cli import entry; entry()" gen examples/gemm_decomposition.py --param M=$M --param N=$N --param K=$K -o $HERE/scratch/old/$name.py) > /dev/null 2>&1 || echo "old $name failed"
  PYTHONPATH=$HERE TILEC_CACHE=/tmp/tc_gen timeout 300 python -c "from tilec.app.cli import entry; entry()" gen examples/gemm_decomposition.py --param M=$M --param N=$N --param K=$K -o scratch/new/$name.py > /dev/null 2>&1 || echo "new $name failed"
done < scratch/shapes.txt
ls scratch/old scratch/new | wc -l
