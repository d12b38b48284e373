"""The product without a screen: the runtime (the lifecycle) and the services it holds and hands to the UI. No
Textual, no argparse (docs/ARCHITECTURE.md, "Services, handed down")."""
