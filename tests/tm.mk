# Tag matching (docs/tag-matching.md): the TM-SRQ through the verbs API.
# cq_poll.c and srq.c hand tag-matching CQEs and SRQs to tm.c
tests_provider_cq_poll_SOURCES += provider/tm.c
tests_provider_dv_wc_SOURCES += provider/tm.c
