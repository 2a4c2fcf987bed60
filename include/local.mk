# include/: headers shared by the pieces (declared where they are used).
noinst_HEADERS += include/uroce/fdmsg.h
