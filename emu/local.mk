# emu: targets are added by the files of this directory.
