import Foundation
@_spi(Internals) import NearbyFusion
@_spi(Internals) import NearbyFusionEvaluation
import NearbyFusionTestSupport
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

@Suite("EKF steps and the hypothesis bank")
struct FilterTests {
    /// For a linear measurement the EKF update is the Kalman update: compare with the
    /// closed form (information form) of the posterior.
    @Test func scalarUpdateEqualsTheKalmanPosterior() throws {
        struct Linear: ScalarMeasurementModel {
            var h: Vector3
            var variance: Double
            var gate: Double { .infinity }
            func predicted(_ p: Vector3) -> Double { h.dot(p) }
            func jacobian(_ p: Vector3) -> Vector3 { h }
            func residual(_ z: Double, _ zhat: Double) -> Double { z - zhat }
        }
        var mean = Vector3(1, 2, 3)
        var covariance = Matrix3(2, 0.3, 0, 0.3, 1, 0.1, 0, 0.1, 0.5)
        let model = Linear(h: Vector3(0.6, -0.8, 0), variance: 0.04)
        let priorInfo = try #require(covariance.inverse)
        let expectedCovariance = try #require((priorInfo + (1 / model.variance) * Matrix3.outer(model.h, model.h)).inverse)
        let expectedMean = expectedCovariance * (priorInfo * mean + (2.5 / model.variance) * model.h)
        let outcome = EKFUpdate.update(mean: &mean, covariance: &covariance, model: model, measured: 2.5)
        #expect(outcome.accepted)
        #expect((mean - expectedMean).length < 1e-10)
        let d = covariance - expectedCovariance
        #expect(abs(d.m00) + abs(d.m01) + abs(d.m11) + abs(d.m12) + abs(d.m22) < 1e-10)
    }

    @Test func mahalanobisGateRejectsANonLineOfSightRange() {
        var mean = Vector3(0, 0, -4)
        var covariance = Matrix3.scaledIdentity(0.01)
        let model = RangeModel(antennaInWorld: .zero, standardDeviation: 0.06, gate: 6.63)
        let before = (mean, covariance)
        let outcome = EKFUpdate.update(mean: &mean, covariance: &covariance, model: model, measured: 5.2)
        #expect(!outcome.accepted)
        #expect(outcome.normalizedInnovationSquared > 6.63)
        #expect(mean == before.0 && covariance == before.1)
        let inlier = EKFUpdate.update(mean: &mean, covariance: &covariance, model: model, measured: 4.05)
        #expect(inlier.accepted)
    }

    @Test func josephFormKeepsCovarianceSymmetricPositiveDefinite() throws {
        var noise = NoiseStream(seed: 31, source: "joseph")
        var mean = Vector3(0.3, 1.2, -4)
        var covariance = Matrix3.scaledIdentity(4)
        for k in 0..<500 {
            let a = Vector3(noise.uniform(-0.3, 0.3), noise.uniform(1, 1.8), noise.uniform(-0.2, 0.2))
            let model = RangeModel(antennaInWorld: a, standardDeviation: 0.06, gate: .infinity)
            _ = EKFUpdate.update(mean: &mean, covariance: &covariance, model: model,
                                 measured: (Vector3(0.5, 1.3, -4) - a).length + noise.gaussian(standardDeviation: 0.06))
            if k % 3 == 0 {
                let d = DirectionModel(antennaInWorld: a, worldFromDevice: .identity, azimuthStandardDeviation: 0.05,
                                       elevationStandardDeviation: 0.09, gate: .infinity)
                _ = EKFUpdate.update(mean: &mean, covariance: &covariance, model: d,
                                     measured: d.predicted(Vector3(0.5, 1.3, -4)))
            }
            #expect(covariance == covariance.transposed)
            let e = try #require(SymmetricEigen3.lapack(covariance))
            #expect(e.values.x > 0)
        }
        #expect((mean - Vector3(0.5, 1.3, -4)).length < 0.1)
    }

    /// A hypothesis 10 m from the antenna whose bearing is 2 m (11°) uncertain across the line
    /// of sight and whose distance is known to 1 cm: the points it stands for lie on the sphere,
    /// 0.4 m inside its tangent plane on average. Its moments on the sphere match the sphere's,
    /// integrated exactly over the tangential Gaussian (arc lengths, a 161 × 161 grid to ±5σ);
    /// the flat Gaussian's do not, and claim a point 23° round the sphere impossible.
    @Test func aHypothesisSpreadOverTheSphereReportsTheSpheresMoments() throws {
        let r = 10.0, sigma = 2.0, radial = 0.01
        let u = Vector3(0, 0, -1)
        var mixture = PositionMixture(capacity: 1)
        mixture.reset([PositionHypothesis(logWeight: 0, meanInWorld: r * u,
                                          covariance: Matrix3(diagonal: Vector3(sigma * sigma, sigma * sigma, radial * radial)))])
        // The exact moments along u: E[r cos θ] and Var[r cos θ] + σ_radial², θ = ‖t‖/r.
        var w = 0.0, m1 = 0.0, m2 = 0.0
        let n = 80, step = 5 * sigma / Double(n)
        for i in -n...n {
            for j in -n...n {
                let tx = Double(i) * step, ty = Double(j) * step
                let weight = exp(-0.5 * (tx * tx + ty * ty) / (sigma * sigma))
                let along = r * cos((tx * tx + ty * ty).squareRoot() / r)
                w += weight; m1 += weight * along; m2 += weight * along * along
            }
        }
        let exactShift = r - m1 / w, exactVariance = m2 / w - (m1 / w) * (m1 / w) + radial * radial
        let curved = mixture.momentsOnSphere(about: .zero)
        let shift = r - curved.meanInWorld.dot(u)
        #expect(abs(shift - exactShift) < 0.03 * exactShift, "shift \(shift) m against \(exactShift) m")
        let variance = curved.covariance.quadraticForm(u)
        #expect(abs(variance - exactVariance) < 0.1 * exactVariance, "radial variance \(variance) against \(exactVariance) m²")
        // Across the line of sight nothing changes.
        #expect(abs(curved.covariance[0, 0] - sigma * sigma) < 1e-12 && abs(curved.meanInWorld.x) < 1e-12)
        // A point 4 m (23°) round the sphere: impossible for the flat Gaussian, 2σ for the curved one.
        let theta = 2 * sigma / r
        let point = r * Vector3(sin(theta), 0, -cos(theta))
        let flat = try #require(mixture.moments.covariance.inverse).quadraticForm(point - mixture.moments.meanInWorld)
        let onSphere = try #require(curved.covariance.inverse).quadraticForm(point - curved.meanInWorld)
        #expect(flat > 1000 && onSphere < 6, "NEES \(flat) flat, \(onSphere) on the sphere")
    }

    /// A still phone ranging a still Channel Sounding tag reports its bank on the sphere of
    /// each tile's distance: the moments' second moment about the device, `‖μ̄ − a‖² + tr P̄`, is
    /// the tiles' mean squared distance (flat tiles reach beyond it by their tangential
    /// variance). A phone that walked toward the tag and back has ranged it from metres apart:
    /// its ranges leave a ring about its path, not a sphere about the device, and the flat
    /// moments are reported.
    @Test func aBankRangedFromOnePlaceIsReportedOnTheSphereAndAWalkersIsNot() throws {
        for seed: UInt64 in 1...2 {
            let run = ScenarioRun(ScenarioCatalogue.channelSoundingProfileStill(seed: seed, stem: "cs-ifft", model: .inverseFFT))
            var curved = 0
            for u in run.updates where u.hypotheses.count > 1 {
                var bank = PositionMixture(capacity: u.hypotheses.count)
                bank.reset(u.hypotheses)
                let reported = try #require(u.moments)
                guard reported != bank.moments else { continue }
                curved += 1
                let a = u.truthInWorld - u.trueDistanceVector
                var meanSquare = 0.0
                for h in u.hypotheses { meanSquare += exp(h.logWeight) * (h.meanInWorld - a).lengthSquared }
                let second = (reported.meanInWorld - a).lengthSquared + reported.covariance.trace
                #expect(abs(second / meanSquare - 1) < 0.01, "seed \(seed) at \(u.estimate.timestamp) s: \(second) against \(meanSquare) m²")
            }
            #expect(curved >= run.updates.count - 3, "seed \(seed): \(curved) of \(run.updates.count) updates on the sphere")
        }
        let walk = ScenarioRun(ScenarioCatalogue.channelSoundingProfileWalk(seed: 1, stem: "cs-ifft", model: .inverseFFT))
        let last = try #require(walk.updates.last)
        var bank = PositionMixture(capacity: max(last.hypotheses.count, 1))
        bank.reset(last.hypotheses)
        #expect(last.moments == bank.moments)
    }

    @Test func sphereTilingIsSymmetricAboutTheDevicesHorizontalPlane() {
        var mixture = PositionMixture(capacity: 96)
        let antenna = Vector3(0.2, 1.4, -0.1)
        mixture.initialize(rangeMetres: 4, antennaInWorld: antenna, forwardInWorld: Vector3(0, 0, -1), options: FusionOptions())
        #expect(mixture.count > 40 && mixture.count <= 96)
        for h in mixture.hypotheses {
            #expect(abs((h.meanInWorld - antenna).length - 4) < 1e-9)
            let mirrored = Vector3(h.meanInWorld.x, 2 * antenna.y - h.meanInWorld.y, h.meanInWorld.z)
            #expect(mixture.hypotheses.contains { ($0.meanInWorld - mirrored).length < 1e-9 })
        }
        let total = mixture.hypotheses.reduce(0.0) { $0 + exp($1.logWeight) }
        #expect(abs(total - 1) < 1e-12)
    }

    @Test func movementAccumulatorMeasuresTheSpreadOfPositions() throws {
        var movement = MovementAccumulator()
        for k in 0..<1000 { movement.add(Vector3(0.3 * sin(2 * .pi * Double(k) / 100), 1.4, -2)) }
        let e = try #require(SymmetricEigen3.lapack(movement.covariance))
        // RMS of a sine of amplitude 0.3 m over whole periods is 0.3/√2.
        #expect(abs(e.values.z.squareRoot() - 0.3 / 2.0.squareRoot()) < 0.01)
        #expect(e.values.y < 1e-12)
    }

    /// A walker from `start` at `velocity` (world frame, metres, m/s), ranged with σ 5 cm every
    /// 0.1 s for 20 s from a device that moves in all three axes: the moving batch's test window.
    static func walkerRanges(start: Vector3, velocity: Vector3, noise: inout NoiseStream) -> [WindowEntry] {
        (0..<200).map { k in
            let now = Double(k) * 0.1
            let a = Vector3(1.5 * sin(0.4 * now), 1.3 + 0.4 * sin(0.9 * now), 1.0 * sin(0.25 * now))
            let range = (start + now * velocity - a).length + noise.gaussian(standardDeviation: 0.05)
            return WindowEntry(antennaInWorld: a, worldFromDevice: .identity, rangeMetres: range, angles: Vector2(0, 0),
                               hasRange: true, direction: .none, directionMissing: false, multiplicity: 1, timestamp: now)
        }
    }

    @Test func theMovingBatchRecoversAWalkersPositionNowAndItsVelocity() throws {
        // A target walking at 0.3 m/s, ranged (σ 5 cm) every 0.1 s for 20 s from a device
        // that moves in all three axes; one hypothesis whose prior is 1 m off where the
        // target began. The moving batch finds where it is *now* and how it walks; the
        // fixed-point batch cannot (it fits one point to a 6 m walk).
        var noise = NoiseStream(seed: 7, source: "moving-batch")
        let start = Vector3(2, 0.6, -4), velocity = Vector3(0.3, 0, -0.1)
        var options = FusionOptions()
        options.sensors.rangeStandardDeviation = 0.05
        var window = MeasurementWindow(capacity: 400)
        for e in Self.walkerRanges(start: start, velocity: velocity, noise: &noise) { window.append(e) }
        let now = window.entries.last?.timestamp ?? 0
        let truthNow = start + now * velocity
        var moving = PositionMixture(capacity: 4)
        moving.reset([PositionHypothesis(logWeight: 0, meanInWorld: start + Vector3(0.6, -0.5, 0.6),
                                         covariance: .scaledIdentity(1))])
        var still = moving
        // Re-solved as the window grows (each solve starts from the last one, as the engine does).
        for _ in 0..<3 { BatchRefinement.refineMoving(&moving, window: window, now: now, start: 0, options: options) }
        BatchRefinement.refine(&still, window: window, options: options)
        let h = try #require(moving.hypotheses.first)
        let error = h.meanInWorld - truthNow
        // Horizontally within 10 cm; the height, which ±0.4 m of device height at 4.5 m
        // determines to σ ≈ 0.2 m, within what its covariance claims (below).
        #expect(Vector3(error.x, 0, error.z).length < 0.1, "position now off by \(error) m")
        #expect((h.velocityInWorld - velocity).length < 0.03, "velocity \(h.velocityInWorld)")
        // Its claimed covariance covers the error (NEES well under the χ²(3) 99.9 % point).
        let inverse = try #require(h.covariance.inverse)
        #expect(inverse.quadraticForm(error) < 16.3)
        #expect(h.velocityCovariance.trace > 0 && h.velocityCovariance.trace < 0.01)
        #expect((still.hypotheses[0].meanInWorld - truthNow).length > 1)
    }

    /// The burst chain's linearisation of a window (ranges in multipath bursts) weighs the
    /// window's directions beside its ranges — it skips them only for a window that holds none
    /// — and its missing directions: dropping either from the entries changes the model.
    @Test func theBurstChainsLinearisationReadsTheWindowsDirections() throws {
        var options = FusionOptions()
        // Ranges weighed by the burst chain: multipath in bursts.
        options.gating.rangeMultipathProbability = 0.15
        options.gating.rangeMultipathMaximumExcess = 1.5
        options.gating.rangeMultipathBurstSeconds = 1.5
        let tag = Vector3(0.8, 1.1, -3.5)
        var noise = NoiseStream(seed: 13, source: "burst-directions")
        var full = MeasurementWindow(capacity: 64), rangesOnly = MeasurementWindow(capacity: 64)
        var missingDropped = MeasurementWindow(capacity: 64)
        for k in 0..<40 {
            let antenna = Vector3(0.3 * sin(0.3 * Double(k)), 1.4, 0)
            let toTag = tag - antenna
            var entry = WindowEntry(antennaInWorld: antenna, worldFromDevice: .identity, rangeMetres: toTag.length + noise.gaussian(standardDeviation: 0.05),
                                    angles: Vector2(atan2(toTag.x, -toTag.z), 0), hasRange: true,
                                    direction: k % 3 == 0 ? .azimuth : .none, directionMissing: k % 3 == 1, multiplicity: 1,
                                    timestamp: 0.1 * Double(k))
            full.append(entry)
            entry.directionMissing = false
            missingDropped.append(entry)
            entry.direction = .none
            rangesOnly.append(entry)
        }
        let h = PositionHypothesis(logWeight: 0, meanInWorld: tag + Vector3(0.2, 0, 0.1), covariance: .scaledIdentity(1))
        let x = tag + Vector3(0.1, -0.05, 0.1)
        let withAll = try #require(BatchRefinement.linearisation(of: h, at: x, window: full, options: options))
        let withoutMissing = try #require(BatchRefinement.linearisation(of: h, at: x, window: missingDropped, options: options))
        let ranges = try #require(BatchRefinement.linearisation(of: h, at: x, window: rangesOnly, options: options))
        // The azimuths add information; the missing directions add their log-likelihood.
        #expect((withoutMissing.information - ranges.information).trace > 1)
        #expect(withAll.logMissing != 0 && withoutMissing.logMissing == 0)
    }

    @Test func theMovingBatchsKeptTermsFadeByOneFactorAndExtendEntryByEntry() {
        // The kept model's identity: terms anchored at t_m, scaled by exp(−(now − t_m)/T), are
        // the terms anchored at now of the same trajectory (x(now) = x(t_m) + (now − t_m) v) —
        // the same log-likelihood and the same position block — and terms added entry by
        // entry are the terms of the window at once.
        var options = FusionOptions()
        options.motion.movingBatchMemory = 5
        var noise = NoiseStream(seed: 11, source: "moving-terms")
        var entries: [WindowEntry] = []
        for k in 0..<60 {
            let t = Double(k) * 0.1
            let a = Vector3(sin(t), 1.3, 0.4 * cos(t))
            entries.append(WindowEntry(antennaInWorld: a, worldFromDevice: .identity,
                                       rangeMetres: (Vector3(1, 0.5, -4) + t * Vector3(0.2, 0, 0.1) - a).length
                                           + noise.gaussian(standardDeviation: 0.05),
                                       angles: Vector2(0, 0), hasRange: true, direction: .none, directionMissing: false,
                                       multiplicity: 1, timestamp: t))
        }
        func norm(_ m: Matrix3) -> Double { (m * m.transposed).trace.squareRoot() }
        let xm = Vector3(1.3, 0.4, -3.5), v = Vector3(0.25, 0.02, 0.05), tm = 3.0, now = 5.9
        let anchored = BatchRefinement.movingTerms(of: entries, position: xm, velocity: v, anchor: tm, options: options)
        let atNow = BatchRefinement.movingTerms(of: entries, position: xm + (now - tm) * v, velocity: v, anchor: now, options: options)
        let d = exp(-(now - tm) / options.motion.movingBatchMemory)
        #expect(abs(d * anchored.logLikelihood - atNow.logLikelihood) < 1e-9 * abs(atNow.logLikelihood))
        #expect(norm(d * anchored.axx - atNow.axx) < 1e-9 * norm(atNow.axx))
        var extended = BatchRefinement.MovingNormalEquations()
        for e in entries {
            let one = BatchRefinement.movingTerms(of: [e], position: xm, velocity: v, anchor: tm, options: options)
            extended.axx += one.axx; extended.axv += one.axv; extended.avv += one.avv
            extended.bx += one.bx; extended.bv += one.bv; extended.logLikelihood += one.logLikelihood
        }
        #expect(norm(extended.avv - anchored.avv) < 1e-9 * norm(anchored.avv))
        #expect((extended.bv - anchored.bv).length < 1e-9 * max(anchored.bv.length, 1))
    }

    @Test func theMovingBatchsWindowPassSumsItsSlotsAsTheEntriesAddThem() {
        // A window pass fills residual slots and sums them a few sums at a time; the result
        // must be the entries' terms added one by one, to the bit: ranges long and short (and
        // gross outliers of both signs), azimuths, azimuths with elevations, missing
        // directions, entries without a range, thinned entries standing for several updates.
        var options = FusionOptions()
        options.motion.movingBatchMemory = 4
        var noise = NoiseStream(seed: 31, source: "moving-slots")
        var window = MeasurementWindow(capacity: 200)
        let x0 = Vector3(1.5, 0.8, -6), velocity = Vector3(0.5, 0, -0.3)
        var kinds = (ranges: 0, azimuths: 0, elevations: 0, missing: 0, outliers: 0)
        for k in 0..<120 {
            let t = Double(k) * 0.1
            let a = Vector3(sin(0.7 * t), 1.3, 0.3 * cos(t))
            let q = Quaternion(angle: 0.6 * sin(0.4 * t) + (k % 9 == 4 ? .pi : 0), axis: Vector3(0, 1, 0))
            let truth = x0 + t * velocity
            var range: Double? = (truth - a).length + noise.gaussian(standardDeviation: 0.08)
            if k % 13 == 6 { range = range.map { $0 + (k % 2 == 0 ? 3.5 : -2.5) }; kinds.outliers += 1 }
            if k % 11 == 10 { range = nil }
            let inDevice = q.inverseRotate(truth - a).normalized
            var direction: Vector3? = DeviceAngles.direction(azimuth: atan2(inDevice.x, -inDevice.z) + noise.gaussian(standardDeviation: 0.1),
                                                             elevation: asin(inDevice.y) + noise.gaussian(standardDeviation: 0.1))
            if k % 4 == 1 { direction = direction.map { Vector3($0.x, 0, $0.z).normalized } }
            if k % 4 == 3 { direction = nil }
            let pose = DevicePose(timestamp: t, positionInWorld: a, worldFromDevice: q)
            var entry = WindowEntry(range: range, direction: direction, pose: pose, antennaInWorld: a, capabilities: .phone,
                                    options: options)
            entry.multiplicity = k % 7 == 0 ? 3 : 1
            if entry.hasRange { kinds.ranges += 1 }
            switch entry.direction {
            case .azimuth: kinds.azimuths += 1
            case .azimuthElevation: kinds.elevations += 1
            case .none: if entry.directionMissing { kinds.missing += 1 }
            }
            window.append(entry)
        }
        #expect(kinds.ranges > 90 && kinds.azimuths > 20 && kinds.elevations > 20 && kinds.missing > 10 && kinds.outliers > 5)
        let now = window.entries.last?.timestamp ?? 0
        for (x, v) in [(x0 + now * velocity, velocity), (x0 + now * velocity + Vector3(0.6, -0.3, 0.4), velocity + Vector3(0.3, 0.1, -0.2))] {
            let summed = BatchRefinement.movingWindowTerms(of: window, position: x, velocity: v, now: now, options: options)
            let added = BatchRefinement.movingTerms(of: window.entries, position: x, velocity: v, anchor: now, options: options)
            #expect(summed == added)
            #expect(summed.kvv != .zero && summed.bv != .zero && summed.logLikelihood.isFinite)
        }
    }

    @Test func theMovingBatchsNewtonModelIsTheCostsSecondOrderExpansion() throws {
        // The ranges' curvature K completes the Hessian: around a point 0.4 m and 0.2 m/s off a
        // walker's track, the model f − bᵀδ + ½ δᵀ(A − K)δ predicts the window's cost after a
        // step of 6 cm and 3 cm/s at least twenty times better than Gauss–Newton's
        // f − bᵀδ + ½ δᵀAδ, and its error shrinks as the step's cube (eightfold for half the
        // step) where Gauss–Newton's shrinks as its square. At a noise-free track (no residual)
        // K vanishes. (The configured σ, ten times the noise, keeps every range an inlier:
        // the robust weights, which neither model differentiates, stay constant.)
        var options = FusionOptions()
        options.sensors.rangeStandardDeviation = 0.5
        options.motion.movingBatchMemory = 4
        var noise = NoiseStream(seed: 23, source: "moving-newton")
        let x0 = Vector3(1, 0.5, -8), velocity = Vector3(0.4, 0, -0.2), now = 3.9
        func entries(noisy: Bool) -> [WindowEntry] {
            (0..<40).map { k in
                let t = Double(k) * 0.1
                let a = Vector3(2 * sin(0.8 * t), 1.3 + 0.5 * cos(t), 0.5 * t)
                let range = (x0 + t * velocity - a).length + (noisy ? noise.gaussian(standardDeviation: 0.05) : 0)
                return WindowEntry(antennaInWorld: a, worldFromDevice: .identity, rangeMetres: range, angles: Vector2(0, 0),
                                   hasRange: true, direction: .none, directionMissing: false, multiplicity: 1, timestamp: t)
            }
        }
        let window = entries(noisy: true)
        func terms(_ x: Vector3, _ v: Vector3) -> BatchRefinement.MovingNormalEquations {
            BatchRefinement.movingTerms(of: window, position: x, velocity: v, anchor: now, options: options)
        }
        let x = x0 + now * velocity + Vector3(0.3, -0.2, 0.2), v = velocity + Vector3(0.1, 0.1, -0.1)
        let n = terms(x, v)
        func form(_ xx: Matrix3, _ xv: Matrix3, _ vv: Matrix3, _ dx: Vector3, _ dv: Vector3) -> Double {
            xx.quadraticForm(dx) + 2 * dx.dot(xv * dv) + vv.quadraticForm(dv)
        }
        func errors(scale s: Double) -> (gaussNewton: Double, newton: Double) {
            let dx = s * Vector3(0.04, -0.03, 0.03), dv = s * Vector3(-0.02, 0.015, 0.015)
            let exact = -terms(x + dx, v + dv).logLikelihood
            let linear = -n.logLikelihood - n.bx.dot(dx) - n.bv.dot(dv)
            let gaussNewton = linear + 0.5 * form(n.axx, n.axv, n.avv, dx, dv)
            let newton = gaussNewton - 0.5 * form(n.kxx, n.kxv, n.kvv, dx, dv)
            return (abs(exact - gaussNewton), abs(exact - newton))
        }
        let full = errors(scale: 1), half = errors(scale: 0.5)
        #expect(full.newton < full.gaussNewton / 20)
        #expect(half.gaussNewton > full.gaussNewton / 5 && half.gaussNewton < full.gaussNewton / 3)
        #expect(half.newton < full.newton / 6)
        let atTruth = BatchRefinement.movingTerms(of: entries(noisy: false), position: x0 + now * velocity, velocity: velocity,
                                                   anchor: now, options: options)
        #expect((atTruth.kxx * atTruth.kxx).trace + (atTruth.kvv * atTruth.kvv).trace < 1e-20)
        #expect((n.kvv * n.kvv).trace > 1)
    }

    /// The options of the walker tests (σ 5 cm): the default kept models, and the exact batch
    /// (tolerance 0, every hypothesis re-solved in full).
    static func keptAndExactOptions() -> (kept: FusionOptions, exact: FusionOptions) {
        var kept = FusionOptions()
        kept.sensors.rangeStandardDeviation = 0.05
        var exact = kept
        exact.acquisition.relinearisationTolerance = 0
        return (kept, exact)
    }

    /// A walker ranged from a moving device for 20 s (σ 5 cm), its bank refined at every
    /// update twice: with kept models at `scale` × the still batch's tolerance
    /// (``FusionOptions/Acquisition/movingBatchToleranceScale``) and re-solved in full at each
    /// update (tolerance 0). Returns the largest Mahalanobis² of a kept hypothesis's position
    /// from its re-solved twin (in the latter's covariance) and when it came, the largest
    /// weight difference, and at how many of the updates kept models carried a hypothesis.
    static func keptBankDeparture(scale: Double) throws
        -> (worstSquared: Double, worstTime: Double, worstWeight: Double, fromModel: Int, updates: Int) {
        var noise = NoiseStream(seed: 5, source: "moving-model")
        let start = Vector3(2, 0.6, -4), velocity = Vector3(0.3, 0, -0.1)
        var (kept, exact) = Self.keptAndExactOptions()
        kept.acquisition.movingBatchToleranceScale = scale
        var window = MeasurementWindow(capacity: 400)
        var bank = PositionMixture(capacity: 4)
        bank.reset([PositionHypothesis(logWeight: log(0.6), meanInWorld: start + Vector3(0.6, -0.5, 0.6), covariance: .scaledIdentity(1)),
                    PositionHypothesis(logWeight: log(0.4), meanInWorld: start + Vector3(-0.8, 0.3, 1.0), covariance: .scaledIdentity(1))])
        var reference = bank
        var result = (worstSquared: 0.0, worstTime: 0.0, worstWeight: 0.0, fromModel: 0, updates: 0)
        for (k, entry) in Self.walkerRanges(start: start, velocity: velocity, noise: &noise).enumerated() {
            let now = entry.timestamp
            window.append(entry)
            BatchRefinement.refineMoving(&bank, window: window, now: now, start: 0, options: kept)
            BatchRefinement.refineMoving(&reference, window: window, now: now, start: 0, options: exact)
            guard k >= 20 else { continue }
            result.updates += 1
            if bank.hypotheses.contains(where: { $0.moving.anchorTime < now }) { result.fromModel += 1 }
            for (h, r) in zip(bank.hypotheses, reference.hypotheses) {
                let inverse = try #require(r.covariance.inverse)
                let squared = inverse.quadraticForm(h.meanInWorld - r.meanInWorld)
                if squared > result.worstSquared { (result.worstSquared, result.worstTime) = (squared, now) }
                result.worstWeight = max(result.worstWeight, abs(exp(h.logWeight) - exp(r.logWeight)))
            }
        }
        return result
    }

    @Test func theMovingBatchsKeptModelAgreesWithTheExactSolveAndIsUsed() throws {
        // At the default scale the two banks agree (positions within 1σ of each other — the
        // full solve's own Gauss–Newton stops within a flat valley's width —, weights within
        // 0.02), and the kept models carried more than a fifth of the updates (a hypothesis
        // settled from its model keeps an anchor older than the update).
        let departure = try Self.keptBankDeparture(scale: FusionOptions().acquisition.movingBatchToleranceScale)
        #expect(departure.worstSquared < 1, "\(departure.worstSquared) σ² at \(departure.worstTime) s")
        #expect(departure.worstWeight < 0.02)
        #expect(departure.fromModel > departure.updates / 5, "kept models used at \(departure.fromModel) of \(departure.updates) updates")
    }

    @Test func aMovingBatchAllowedTwiceTheDefaultReachSettlesElsewhere() throws {
        // Why the moving batch's scale is 1/3 (``FusionOptions/Acquisition/movingBatchToleranceScale``):
        // at 2/3, and at 1, the same walker's kept bank leaves the re-solved one by more than
        // 3σ within its first 5 s.
        for scale in [2.0 / 3, 1] {
            let departure = try Self.keptBankDeparture(scale: scale)
            #expect(departure.worstSquared > 9 && departure.worstTime < 5,
                    "at \(scale): \(departure.worstSquared) σ² at \(departure.worstTime) s")
        }
    }

    @Test func aMovingReSolveStopsWhereItsFreshModelHolds() throws {
        // A walker ranged for 20 s from a moving device; one hypothesis 1 m and 0.3 m/s off,
        // with no kept model, solved once at the default tolerance and once exactly (tolerance
        // 0, iterated until the cost stops falling). The first stops as soon as the model
        // linearised at its point holds over its step — fewer window linearisations — and lands
        // where the exact solve does, well within the exact solution's 1σ, with its model kept
        // at the full window and anchored now.
        var noise = NoiseStream(seed: 29, source: "moving-resolve")
        let start = Vector3(2, 0.6, -4), velocity = Vector3(0.3, 0, -0.1)
        let (kept, exact) = Self.keptAndExactOptions()
        var window = MeasurementWindow(capacity: 400)
        for e in Self.walkerRanges(start: start, velocity: velocity, noise: &noise) { window.append(e) }
        let now = window.entries.last?.timestamp ?? 0
        var bank = PositionMixture(capacity: 4)
        var hypothesis = PositionHypothesis(logWeight: 0, meanInWorld: start + now * velocity + Vector3(0.7, -0.4, 0.6),
                                            covariance: .scaledIdentity(1))
        hypothesis.velocityInWorld = velocity + Vector3(0.2, 0, 0.2)
        bank.reset([hypothesis])
        var reference = bank
        let passes = BatchRefinement.refineMoving(&bank, window: window, now: now, start: 0, options: kept)
        let exactPasses = BatchRefinement.refineMoving(&reference, window: window, now: now, start: 0, options: exact)
        let h = try #require(bank.hypotheses.first), r = try #require(reference.hypotheses.first)
        #expect(passes < exactPasses, "\(passes) window linearisations against the exact solve's \(exactPasses)")
        let difference = h.meanInWorld - r.meanInWorld
        let inverse = try #require(r.covariance.inverse)
        #expect(inverse.quadraticForm(difference) < 0.05, "\(h.meanInWorld) against \(r.meanInWorld)")
        #expect((h.velocityInWorld - r.velocityInWorld).length < 0.01)
        #expect(abs(h.logWeight - r.logWeight) < 0.05)
        #expect(h.moving.entryCount == window.entries.count && h.moving.anchorTime == now)
    }

    @Test func multipathBurstChainReducesToIndependentRangesAndDiscountsARun() throws {
        // A still tag 4 m ahead, Channel Sounding noise; the device sweeps sideways and up and
        // down for 12 s at 4 Hz; from 5 s to 7 s every range is 1.2 m long (one reflection
        // that lasted). Seeded jitter.
        var noise = NoiseStream(seed: 11, source: "burst-chain")
        let truth = Vector3(0.8, 1.0, -3.9)
        var window = MeasurementWindow(capacity: 200)
        for k in 0..<48 {
            let t = Double(k) * 0.25
            let a = Vector3(0.4 * sin(1.3 * t), 1.4 + 0.3 * sin(0.7 * t), 0.2 * sin(0.3 * t))
            var range = (truth - a).length + noise.gaussian(standardDeviation: 0.35)
            if t >= 5, t <= 7 { range += 1.2 }
            window.append(WindowEntry(antennaInWorld: a, worldFromDevice: .identity, rangeMetres: range, angles: Vector2(0, 0),
                                      hasRange: true, direction: .none, directionMissing: false, multiplicity: 1, timestamp: t))
        }
        func refined(burstSeconds: Double) -> PositionHypothesis {
            var o = FusionOptions().forRanging(.bluetoothChannelSounding)
            o.gating.rangeMultipathBurstSeconds = burstSeconds
            // The models compared, each window solved whole (not kept between updates).
            o.acquisition.relinearisationTolerance = 0
            var mixture = PositionMixture(capacity: 4)
            mixture.reset([PositionHypothesis(logWeight: 0, meanInWorld: truth + Vector3(0.3, 0.2, -0.3), covariance: .scaledIdentity(0.5)),
                           PositionHypothesis(logWeight: 0, meanInWorld: truth + Vector3(-0.6, 0, 0.4), covariance: .scaledIdentity(0.5))])
            BatchRefinement.refine(&mixture, window: window, options: o)
            return mixture.hypotheses[0]
        }
        // A chain that forgets its state between two ranges is the independent model.
        let independent = refined(burstSeconds: 0), forgetful = refined(burstSeconds: 1e-6)
        #expect((independent.meanInWorld - forgetful.meanInWorld).length < 1e-9)
        #expect(abs(independent.logWeight - forgetful.logWeight) < 1e-9)
        #expect(abs(independent.covariance.trace - forgetful.covariance.trace) < 1e-12)
        // With bursts of 0.8 s the run of long ranges is one reflection: it pulls the fit
        // less than eight independent long ranges do.
        let bursty = refined(burstSeconds: 0.8)
        let pullIndependent = (independent.meanInWorld - truth).length, pullBursty = (bursty.meanInWorld - truth).length
        #expect(pullBursty < pullIndependent, "bursty \(pullBursty) m vs independent \(pullIndependent) m")
    }
}
