"""People in the loop: sampling designs, estimators from a judge and a human sample, agreement."""
