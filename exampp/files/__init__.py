"""Reading and writing files as every layer needs it: inputs plain or gzipped, line by line with
bounds, standard input once; outputs written atomically, and the leftovers of writers that died.
"""
