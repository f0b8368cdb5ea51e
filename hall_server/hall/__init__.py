"""The hall's application core: the command loop and the modules that hold its state."""
