/work/main/target/release/cudawatch --color never run --stages plain\,ncu --out-dir /root/out/cap/faulting_launch/run-device_assert --format json -- /root/out/cap/.bin/device_assert 
