/work/main/target/release/cudawatch --color never run --out-dir /tmp/beyond2/alloc_probe/run --timeout 60 --format json -- /tmp/beyond2/.bin/alloc_probe 
