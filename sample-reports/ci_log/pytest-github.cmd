bash /work/main/scripts/ci-job-log.sh /tmp/cap/ci_log /tmp/cap/.bin 
