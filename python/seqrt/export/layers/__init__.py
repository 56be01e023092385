"""Ready layers built from the seqrt ops; each exports with seqrt.export.export."""

from .common import MLP, MultiHeadAttention, RMSNorm
from .hybrid import HybridStack
from .mamba import MambaBlock, MambaMixer
from .mamba2 import Mamba2Block, Mamba2Mixer
from .ode import EncoderBranch, RKEncoderLayer
from .retnet import MultiScaleRetention, RetNetLayer
from .titans import MemoryBranch, TitansMAC, TitansMAG, TitansMAL
from .transformer import GPTBlock

__all__ = ["MLP", "MultiHeadAttention", "RMSNorm", "HybridStack", "MambaBlock",
           "MambaMixer", "Mamba2Block", "Mamba2Mixer", "EncoderBranch",
           "RKEncoderLayer", "MultiScaleRetention", "RetNetLayer",
           "MemoryBranch", "TitansMAC", "TitansMAG", "TitansMAL", "GPTBlock"]
