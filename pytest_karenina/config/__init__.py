"""Run configuration: ``VerificationConfig`` (:mod:`.verification`), ``ModelConfig``
(:mod:`.model`), their sections, rules and Karenina presets (:mod:`.presets`).

Field names follow Karenina, so Karenina preset files load unchanged. The package
itself imports nothing: :mod:`.choices` (plain ``Literal`` value sets) is cheap enough for
the plugin's option declarations, which load in every pytest run. Users import the main
names from :mod:`pytest_karenina`.
"""
