from statistics import mean, stdev

samples = [9.8, 10.1, 9.9, 10.4, 10.0, 9.7]
mu = mean(samples)
sigma = @@Mstdev(samples)
outliers = [x for x in samples if abs(x - mu) > 2 * @@Csigma]@@O
