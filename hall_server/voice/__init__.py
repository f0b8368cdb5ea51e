"""The hall's voice: the words the board speaks (:mod:`.catalog`) and their clips (:mod:`.clips`)."""
