/work/main/target/release/cudawatch --color never run --out-dir /tmp/w/cap/ncu_framework_filter/run-cudawatch-triton_tail_in_model --format json -- python3 triton_tail_in_model.py 
