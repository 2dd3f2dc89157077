"""The four papers' theory: populations, decisions, sharpness, utility calibration."""
