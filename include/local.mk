# include/: headers shared by the pieces (declared where they are used).
