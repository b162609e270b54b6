/work/main/target/release/cudawatch --color never run --out-dir /tmp/w/cap/ncu_framework_filter/run-cudawatch-empty_then_reduce --format json -- python3 empty_then_reduce.py 
