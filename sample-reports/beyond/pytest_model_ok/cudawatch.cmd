/work/main/target/release/cudawatch --color never run --stages plain\,ncu --out-dir /root/out/beyond/pytest_model_ok/run --format json -- python3 -m pytest 
