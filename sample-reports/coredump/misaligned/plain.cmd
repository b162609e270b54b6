/tmp/tmp.EDSbu5qdZI/misaligned 
