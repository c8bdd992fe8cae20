"""What the user said, resolved: options declared (the entry module imports :mod:`.declare`),
read once into frozen Settings, and turned into the run's VerificationConfig.

Imports nothing: the plugin's entry module imports :mod:`.declare` through this package, on
every pytest run.
"""
