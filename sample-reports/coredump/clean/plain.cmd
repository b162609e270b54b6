/tmp/tmp.EDSbu5qdZI/clean 
