"""The product without a screen: services and background capabilities (no Textual, no argparse)."""
