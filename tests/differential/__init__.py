"""The differential corpus: our converters against langchain-core's on the same inputs.

``corpus`` builds the named inputs (the shapes langchain-core's own converter tests
exercise, written here from scratch); ``facts`` projects each converter's output to
comparable facts; ``harness`` runs both converters and compares; ``expected`` names every
difference that is meant to stay (each with its row in ``docs/differential.md``) and every
gap still open.
"""
