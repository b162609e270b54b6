/work/main/target/release/cudawatch --color never run --stages plain\,memcheck --timeout 150 --out-dir /root/out/cap/retry_loop/run-cudawatch --format json -- /root/out/cap/.bin/retry_until_done 
