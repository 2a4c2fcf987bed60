# pyverbs expectations: each test's outcome per rdma-core major (tests/lib.sh pyverbs_run)
EXTRA_DIST += tests/pyverbs_results.py
EXTRA_DIST += tests/pyverbs/44/cm_pyverbs.tsv
EXTRA_DIST += tests/pyverbs/44/it_pyverbs.tsv
EXTRA_DIST += tests/pyverbs/44/traffic_pyverbs.tsv
EXTRA_DIST += tests/pyverbs/44/traffic_pyverbs_atomic.tsv
EXTRA_DIST += tests/pyverbs/44/traffic_pyverbs_odp.tsv
EXTRA_DIST += tests/pyverbs/44/traffic_pyverbs_qpex.tsv
EXTRA_DIST += tests/pyverbs/44/traffic_pyverbs_raw.tsv
EXTRA_DIST += tests/pyverbs/56/cm_pyverbs.tsv
EXTRA_DIST += tests/pyverbs/56/it_pyverbs.tsv
EXTRA_DIST += tests/pyverbs/56/traffic_pyverbs.tsv
EXTRA_DIST += tests/pyverbs/56/traffic_pyverbs_atomic.tsv
EXTRA_DIST += tests/pyverbs/56/traffic_pyverbs_odp.tsv
EXTRA_DIST += tests/pyverbs/56/traffic_pyverbs_qpex.tsv
EXTRA_DIST += tests/pyverbs/56/traffic_pyverbs_raw.tsv
