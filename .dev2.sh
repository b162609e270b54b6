cd $PWD; export PATH=$PATH:/usr/local/cuda/bin
RUN_TIMEOUT=240 scripts/capture-pytorch-instruments.sh /tmp/cap > $OUT/capture.log 2>&1
cd /tmp && tar czf $OUT/cap.tgz cap
