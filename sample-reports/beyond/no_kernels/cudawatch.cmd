/work/main/target/release/cudawatch --color never run --out-dir /tmp/beyond2/no_kernels/run --timeout 60 --format json -- /tmp/beyond2/.bin/no_kernels 
