/work/main/target/release/cudawatch --color never run --timeout 200 --out-dir /root/out/beyond/ddp_ports/run-spawn --format json -- python3 ddp_step.py 
