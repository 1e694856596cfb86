"""``widgets.tape_player``, an old path: the module is ``widgets/player/page/tape_player.py``."""
import sys

from .player.page import tape_player

sys.modules[__name__] = tape_player   # this path names that module, private names included
