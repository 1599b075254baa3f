import Foundation
@_spi(Internals) import NearbyFusion
import NearbyFusionSimulation
import Testing

@Suite("The acquisition batch, kept and extended update by update")
struct IncrementalBatchTests {
    /// An acquisition as the engine runs it: a still tag 4.5 m away, the device sweeping
    /// sideways and up and down while it walks, ranges (σ 0.1 m) at 10 Hz, a direction while
    /// the tag is inside the 60° cone and a missing direction outside it. Seeded noise.
    static func acquisitionWindow(count: Int, capacity: Int = 160, seed: UInt64 = 5) -> [WindowEntry] {
        var noise = NoiseStream(seed: seed, source: "incremental-batch")
        let truth = Vector3(2.5, 0.8, -3.6)
        var entries: [WindowEntry] = []
        var path = 0.0
        var previous: Vector3?
        for k in 0..<count {
            let t = Double(k) * 0.1
            let a = Vector3(0.5 * sin(0.9 * t) + 0.05 * t, 1.3 + 0.25 * sin(0.6 * t), -0.03 * t)
            if let p = previous { path += (a - p).length }
            previous = a
            // The device turns slowly about the vertical: the tag leaves the cone and comes back.
            let yaw = 0.9 * sin(0.2 * t)
            let rotation = Quaternion(x: 0, y: sin(yaw / 2), z: 0, w: cos(yaw / 2))
            let inDevice = rotation.inverseRotate(truth - a)
            let range = (truth - a).length + noise.gaussian(standardDeviation: 0.1)
            var entry = WindowEntry(antennaInWorld: a, worldFromDevice: rotation, rangeMetres: range, angles: Vector2(0, 0),
                                    hasRange: true, direction: .none, directionMissing: false, multiplicity: 1, timestamp: t)
            if DeviceAngles.offAxisAngle(inDevice) < Angle.radians(degrees: 60) {
                let angles = DeviceAngles.azimuthElevation(inDevice)
                entry.angles = Vector2(angles.x + noise.gaussian(standardDeviation: 0.05),
                                       angles.y + noise.gaussian(standardDeviation: 0.05))
                entry.direction = .azimuthElevation
            } else {
                entry.directionMissing = true
            }
            entry.pathLengthMetres = path
            entries.append(entry)
        }
        return entries
    }

    /// The first range's sphere, tiled as the engine tiles it.
    static func tiledBank(first: WindowEntry, options: FusionOptions) -> PositionMixture {
        var mixture = PositionMixture(capacity: options.acquisition.maximumHypotheses)
        mixture.initialize(rangeMetres: first.rangeMetres, antennaInWorld: first.antennaInWorld,
                           forwardInWorld: first.worldFromDevice.rotate(Vector3(0, 0, -1)), options: options)
        return mixture
    }

    /// How far a bank kept update by update strays from the bank solved whole at every update,
    /// over an acquisition: each kept hypothesis against its exact twin (the same tile), its
    /// mean's distance in metres and in the twin's σ (twins holding more than `significant` of
    /// the weight, and how many such pairs), the largest difference of weight, how often a
    /// model was extended, and the window passes each bank made. `reference` replaces the
    /// exact batch (`options` with a relinearisation tolerance of 0) as the bank compared with.
    struct Comparison {
        var worstMetres = 0.0, worstSigmas = 0.0, worstWeight = 0.0, extended = 0, compared = 0
        var exactPasses = 0, keptPasses = 0
        var exact: PositionMixture, kept: PositionMixture
    }

    static func compareBanks(_ entries: [WindowEntry], options: FusionOptions, reference: FusionOptions? = nil,
                             significant: Double) -> Comparison {
        var exactOptions = options
        exactOptions.acquisition.relinearisationTolerance = 0
        if let reference { exactOptions = reference }
        let bank = tiledBank(first: entries[0], options: options)
        var c = Comparison(exact: bank, kept: bank)
        var window = MeasurementWindow(capacity: 160)
        for (k, entry) in entries.dropFirst().enumerated() {
            window.append(entry)
            c.exactPasses += BatchRefinement.refine(&c.exact, window: window, options: exactOptions)
            c.keptPasses += BatchRefinement.refine(&c.kept, window: window, options: options)
            c.exact.pruneAndMerge(minimumWeight: options.acquisition.acquisitionPruneWeight, mergeDistanceSquared: 0)
            c.kept.pruneAndMerge(minimumWeight: options.acquisition.acquisitionPruneWeight, mergeDistanceSquared: 0)
            for h in c.kept.hypotheses {
                guard let twin = c.exact.hypotheses.first(where: { $0.priorMeanInWorld == h.priorMeanInWorld }) else { continue }
                if exp(twin.logWeight) > significant, let information = twin.covariance.inverse {
                    c.worstMetres = max(c.worstMetres, (h.meanInWorld - twin.meanInWorld).length)
                    c.worstSigmas = max(c.worstSigmas, information.quadraticForm(h.meanInWorld - twin.meanInWorld).squareRoot())
                    c.compared += 1
                }
                c.worstWeight = max(c.worstWeight, abs(exp(h.logWeight) - exp(twin.logWeight)))
                if h.linearisation.entryCount == window.entries.count, k > 10 { c.extended += 1 }
            }
        }
        return c
    }

    @Test func extendedUpdateByUpdateTheBatchFollowsTheExactOne() throws {
        #expect(FusionOptions().acquisition.relinearisationTolerance > 0)
        let c = Self.compareBanks(Self.acquisitionWindow(count: 120), options: FusionOptions(), significant: 0.01)
        // Hypotheses that matter sit within 2 cm of the exact solution; no weight is off by 0.05.
        #expect(c.worstMetres < 0.02, "a kept hypothesis strayed \(c.worstMetres) m from the exact one")
        #expect(c.worstWeight < 0.05, "a weight strayed by \(c.worstWeight)")
        #expect(c.extended > 0)
        // Both banks agree on where the tag is.
        let truth = Vector3(2.5, 0.8, -3.6)
        #expect((c.exact.moments.meanInWorld - truth).length < 0.3)
        #expect((c.kept.moments.meanInWorld - c.exact.moments.meanInWorld).length < 0.02)
    }

    /// A refinement counts its work: the exact batch linearises the whole window at least once
    /// for every hypothesis at every update (its solve from the prior, iterated), while a kept
    /// model that holds adds only the new entry — the kept bank linearises its window several
    /// times less often over an acquisition.
    @Test func aRefinementCountsItsWindowPasses() throws {
        let entries = Self.acquisitionWindow(count: 60)
        var exactOptions = FusionOptions()
        exactOptions.acquisition.relinearisationTolerance = 0
        var exact = Self.tiledBank(first: entries[0], options: exactOptions), kept = exact
        var window = MeasurementWindow(capacity: 160)
        var exactPasses = 0, keptPasses = 0, hypothesisUpdates = 0
        for entry in entries.dropFirst() {
            window.append(entry)
            hypothesisUpdates += exact.count
            exactPasses += BatchRefinement.refine(&exact, window: window, options: exactOptions)
            keptPasses += BatchRefinement.refine(&kept, window: window, options: FusionOptions())
        }
        #expect(exactPasses >= hypothesisUpdates, "\(exactPasses) passes for \(hypothesisUpdates) hypothesis updates")
        #expect(keptPasses > 0 && 3 * keptPasses < exactPasses, "kept \(keptPasses), exact \(exactPasses)")
    }

    /// The batch's Gauss–Newton stops once its step lies within 1 % of the hypothesis's own σ
    /// (`δᵀAδ < 10⁻⁴`, ``FusionOptions/Acquisition/solveStepTolerance``) instead of iterating on
    /// to a step of 10 µm (a tolerance of 0): over an acquisition, every hypothesis that holds
    /// 1 % of the weight ends where the iterated one ends, to a twentieth of its σ (about a
    /// hundredth here), every weight the same to 0.002, while the window is linearised a
    /// quarter to a third less often, the kept batch (the engine's) and the exact one (every
    /// hypothesis solved from its prior at every update) alike — both pruned as the engine
    /// prunes them (``compareBanks(_:options:reference:significant:)``).
    @Test func theBatchStopsWithinAHundredthOfASigmaOfItsMinimum() throws {
        let entries = Self.acquisitionWindow(count: 60)
        for relinearisation in [0.0, FusionOptions().acquisition.relinearisationTolerance] {
            var stopped = FusionOptions()
            stopped.acquisition.relinearisationTolerance = relinearisation
            #expect(stopped.acquisition.solveStepTolerance == 1e-4)
            var iterated = stopped
            iterated.acquisition.solveStepTolerance = 0
            let c = Self.compareBanks(entries, options: stopped, reference: iterated, significant: 0.01)
            #expect(c.compared > 50)
            #expect(c.worstSigmas < 0.05, "relinearisation \(relinearisation): a hypothesis \(c.worstSigmas) σ from the iterated one")
            #expect(c.worstWeight < 0.002, "relinearisation \(relinearisation): a weight off by \(c.worstWeight)")
            #expect(Double(c.keptPasses) < (relinearisation > 0 ? 0.85 : 0.95) * Double(c.exactPasses),
                    "relinearisation \(relinearisation): \(c.keptPasses) window passes, \(c.exactPasses) iterated on")
        }
    }

    @Test func theStillBatchsNewtonModelIsTheCostsSecondOrderExpansion() throws {
        // Ranges alone from a short sweep 6 m away (the shell curves away from the sweep): at a
        // point 0.6 m off the tag, the model f − bᵀδ + ½ δᵀ(A − K)δ predicts the window's cost
        // after a 4 cm step at least ten times better than Gauss–Newton's f − bᵀδ + ½ δᵀAδ, and
        // its error shrinks as the step's cube (more than sixfold for half the step) where
        // Gauss–Newton's shrinks as its square. Without the option `K` is not summed. (The
        // configured σ, ten times the noise, keeps every range an inlier: the robust weights,
        // which neither model differentiates, stay constant.)
        var options = FusionOptions()
        options.sensors.rangeStandardDeviation = 0.5
        options.acquisition.stillBatchNewtonSteps = true
        var noise = NoiseStream(seed: 17, source: "still-newton")
        let truth = Vector3(1.5, 0.4, -6)
        var window = MeasurementWindow(capacity: 64)
        for k in 0..<40 {
            let t = Double(k) * 0.1
            let a = Vector3(0.6 * sin(0.7 * t), 1.3 + 0.1 * cos(t), 0.05 * t)
            window.append(WindowEntry(antennaInWorld: a, worldFromDevice: .identity,
                                      rangeMetres: (truth - a).length + noise.gaussian(standardDeviation: 0.05), angles: Vector2(0, 0),
                                      hasRange: true, direction: .none, directionMissing: false, multiplicity: 1, timestamp: t))
        }
        let h = PositionHypothesis(logWeight: 0, meanInWorld: truth, covariance: .scaledIdentity(4))
        let x = truth + Vector3(0.4, -0.3, 0.3)
        let model = try #require(BatchRefinement.linearisation(of: h, at: x, window: window, options: options))
        func errors(scale s: Double) throws -> (gaussNewton: Double, newton: Double) {
            let delta = s * Vector3(0.025, -0.02, 0.025)
            let exact = try #require(BatchRefinement.linearisation(of: h, at: x + delta, window: window, options: options)).cost
            let gaussNewton = model.cost - model.gradient.dot(delta) + 0.5 * model.information.quadraticForm(delta)
            let newton = gaussNewton - 0.5 * model.curvature.quadraticForm(delta)
            return (abs(exact - gaussNewton), abs(exact - newton))
        }
        let full = try errors(scale: 1), half = try errors(scale: 0.5)
        #expect(full.newton < full.gaussNewton / 10, "\(full)")
        #expect(half.gaussNewton > full.gaussNewton / 5 && half.gaussNewton < full.gaussNewton / 3, "\(half) \(full)")
        #expect(half.newton < full.newton / 6, "\(half) \(full)")
        options.acquisition.stillBatchNewtonSteps = false
        let plain = try #require(BatchRefinement.linearisation(of: h, at: x, window: window, options: options))
        #expect(plain.curvature == .zero)
        #expect(plain.information == model.information && plain.cost == model.cost)
    }

    /// The batch reads an entry's direction from its measured vector when it has one, and
    /// from its angles otherwise: the same window both ways — full directions, azimuths alone,
    /// behind the device too — gives the same normal equations and cost to rounding.
    @Test func theBatchReadsADirectionFromItsVectorAsFromItsAngles() throws {
        let options = FusionOptions()
        var noise = NoiseStream(seed: 19, source: "batch-direction-vector")
        let truth = Vector3(0.8, 0.9, -3.5)
        var byVector = MeasurementWindow(capacity: 64), byAngles = MeasurementWindow(capacity: 64)
        for k in 0..<48 {
            let t = Double(k) * 0.1
            let a = Vector3(0.5 * sin(0.9 * t), 1.3, 0.1 * cos(t))
            let yaw = k % 6 == 5 ? Double.pi : 0.4 * sin(0.5 * t)
            let q = Quaternion(angle: yaw, axis: Vector3(0, 1, 0))
            let inDevice = q.inverseRotate(truth - a).normalized
            let noisy = DeviceAngles.direction(azimuth: atan2(inDevice.x, -inDevice.z) + noise.gaussian(standardDeviation: 0.05),
                                               elevation: asin(inDevice.y) + noise.gaussian(standardDeviation: 0.08))
            let direction = k % 3 == 0 ? Vector3(noisy.x, 0, noisy.z).normalized : noisy
            let pose = DevicePose(timestamp: t, positionInWorld: a, worldFromDevice: q)
            let entry = WindowEntry(range: (truth - a).length + noise.gaussian(standardDeviation: 0.05), direction: direction,
                                    pose: pose, antennaInWorld: a, capabilities: .phone, options: options)
            #expect(entry.directionInDevice != .zero)
            var anglesOnly = entry
            anglesOnly.directionInDevice = .zero
            byVector.append(entry)
            byAngles.append(anglesOnly)
        }
        let h = PositionHypothesis(logWeight: 0, meanInWorld: truth, covariance: .scaledIdentity(1))
        for x in [truth, truth + Vector3(0.3, -0.2, 0.4)] {
            let v = try #require(BatchRefinement.linearisation(of: h, at: x, window: byVector, options: options))
            let a = try #require(BatchRefinement.linearisation(of: h, at: x, window: byAngles, options: options))
            let scale = max(abs(a.cost), 1)
            #expect(abs(v.cost - a.cost) < 1e-9 * scale, "\(v.cost) \(a.cost)")
            #expect((v.gradient - a.gradient).length < 1e-9 * max(a.gradient.length, 1))
            let d = v.information - a.information
            #expect((d * d.transposed).trace.squareRoot() < 1e-9 * max((a.information * a.information.transposed).trace.squareRoot(), 1))
        }
    }

    /// Reads one direction entry at a range of points through its world-frame axes and, with
    /// its axes cleared, through the direction model's rotations: 40 devices at random tilts and
    /// rolls, `direction(k)` the measured direction of the `k`-th (device frame), each compared at
    /// points in front, behind, on the device's Y axis, above, and anywhere. The window's normal
    /// equations and cost must agree to rounding; returns how many points were compared.
    static func compareAxesWithModel(seed: UInt64, source: String, direction: (Int, inout NoiseStream) -> Vector3,
                                     check: (WindowEntry, DevicePose) -> Void) throws -> Int {
        let options = FusionOptions()
        var noise = NoiseStream(seed: seed, source: source)
        var compared = 0
        for k in 0..<40 {
            let a = Vector3(noise.gaussian(standardDeviation: 1), 1.3, noise.gaussian(standardDeviation: 1))
            let axis = Vector3(noise.gaussian(standardDeviation: 1), noise.gaussian(standardDeviation: 1), noise.gaussian(standardDeviation: 1))
            let q = Quaternion(angle: noise.gaussian(standardDeviation: 1.5), axis: axis.normalized)
            let measured = direction(k, &noise)
            let pose = DevicePose(timestamp: Double(k), positionInWorld: a, worldFromDevice: q)
            let entry = WindowEntry(range: 4, direction: measured, pose: pose, antennaInWorld: a, capabilities: .phone, options: options)
            check(entry, pose)
            var throughModel = entry
            throughModel.azimuthAxisUInWorld = .zero
            throughModel.azimuthAxisWInWorld = .zero
            throughModel.elevationAxisInWorld = .zero
            var axes = MeasurementWindow(capacity: 4), model = MeasurementWindow(capacity: 4)
            axes.append(entry)
            model.append(throughModel)
            let h = PositionHypothesis(logWeight: 0, meanInWorld: a, covariance: .scaledIdentity(100))
            let points = [a + q.rotate(Vector3(0, 2, 0)), a + q.rotate(Vector3(0.5, 0.3, -3)), a + q.rotate(Vector3(-1, -0.4, 2.5)),
                          a + q.rotate(Vector3(0.2, 3, -0.4)),
                          a + Vector3(noise.gaussian(standardDeviation: 3), noise.gaussian(standardDeviation: 1), noise.gaussian(standardDeviation: 3))]
            for x in points {
                let viaAxes = try #require(BatchRefinement.linearisation(of: h, at: x, window: axes, options: options))
                let viaModel = try #require(BatchRefinement.linearisation(of: h, at: x, window: model, options: options))
                #expect(abs(viaAxes.cost - viaModel.cost) <= 1e-12 * max(abs(viaModel.cost), 1), "\(viaAxes.cost) \(viaModel.cost)")
                #expect((viaAxes.gradient - viaModel.gradient).length <= 1e-12 * max(viaModel.gradient.length, 1))
                let d = viaAxes.information - viaModel.information
                let size = (viaModel.information * viaModel.information.transposed).trace.squareRoot()
                #expect((d * d.transposed).trace.squareRoot() <= 1e-12 * max(size, 1))
                compared += 1
            }
        }
        return compared
    }

    /// An azimuth-only entry is read through its world-frame axes (`WindowEntry.azimuthAxisUInWorld`,
    /// `azimuthAxisWInWorld`) where the model would rotate the object into the device frame twice:
    /// directions on either side, some not of unit length, give the model's normal equations and
    /// cost to rounding (``compareAxesWithModel(seed:source:direction:check:)``).
    @Test func anAzimuthReadThroughItsAxesIsTheModelsAzimuth() throws {
        let compared = try Self.compareAxesWithModel(seed: 23, source: "azimuth-axes", direction: { k, noise in
            let azimuth = noise.gaussian(standardDeviation: 1.2) + (k % 4 == 3 ? Double.pi : 0)
            return Vector3(sin(azimuth), 0, -cos(azimuth)) * (k % 5 == 0 ? 0.3 : 1)
        }, check: { entry, _ in
            #expect(entry.direction == .azimuth && entry.azimuthAxisWInWorld != .zero && entry.elevationAxisInWorld == .zero)
        })
        #expect(compared == 200)
    }

    /// An entry with azimuth and elevation is read through its world-frame axes
    /// (`WindowEntry.azimuthAxisUInWorld`, `azimuthAxisWInWorld`, `elevationAxisInWorld`) where the
    /// model would rotate the object into the device frame three times: directions up, down and
    /// behind give the model's normal equations and cost to rounding
    /// (``compareAxesWithModel(seed:source:direction:check:)``). An entry made for the tracking
    /// filter carries no axes.
    @Test func aDirectionReadThroughItsAxesIsTheModelsDirection() throws {
        let compared = try Self.compareAxesWithModel(seed: 29, source: "direction-axes", direction: { k, noise in
            let azimuth = noise.gaussian(standardDeviation: 1.2) + (k % 4 == 3 ? Double.pi : 0)
            let elevation = noise.gaussian(standardDeviation: 0.6)
            return Vector3(cos(elevation) * sin(azimuth), sin(elevation), -cos(elevation) * cos(azimuth)) * (k % 5 == 0 ? 0.3 : 1)
        }, check: { entry, pose in
            #expect(entry.direction == .azimuthElevation && entry.elevationAxisInWorld != .zero)
            let tracked = WindowEntry(range: 4, direction: entry.directionInDevice, pose: pose, antennaInWorld: entry.antennaInWorld,
                                      capabilities: .phone, options: FusionOptions(), computesElevationAngles: false)
            #expect(tracked.elevationAxisInWorld == .zero && tracked.azimuthAxisWInWorld == .zero)
        })
        #expect(compared == 200)
    }

    /// Beyond an angle density's far residual `e_far` every angle has the gross outliers'
    /// density to the last bit and a robust weight below `2⁻⁵⁴ c/v`, so the batch may take the
    /// stand-in `2 e_far` for any of them without an arc tangent; just inside it the line of
    /// sight still shows. For the default azimuth and elevation σ, and for a density without
    /// gross outliers (which has no far residual). At the defaults `e_far` is about 27° in
    /// azimuth and 46° in elevation, as Derivations says.
    @Test func anAngleBeyondTheFarResidualIsTheOutliersAlone() {
        let options = FusionOptions()
        let angles = RangeErrorDensity(outlierProbability: options.gating.outlierProbability, outlierSpan: options.gating.angleOutlierSpan,
                                       excessProbability: 0, excessRange: 0...0)
        for sigma in [options.sensors.azimuthStandardDeviation, options.sensors.elevationStandardDeviation] {
            let density = angles.at(variance: sigma * sigma)
            let far = density.farResidualSquared.squareRoot()
            #expect(far > 5 * sigma && far < .pi / 2, "e_far \(far) rad at σ \(sigma)")
            #expect(abs(density.farAngleTangent - tan(far)) <= 1e-15 * tan(far))
            #expect(density.farAngleStandIn > far)
            for e in [far * 1.000001, far * 1.5, density.farAngleStandIn, 3.0, -far * 1.000001, -2.0] {
                for c in [1.0, 2.0] {
                    let robust = density.robustWeight(e, multiplicity: c)
                    #expect(robust.density == angles.outlierDensity, "p(\(e)) = \(robust.density)")
                    #expect(robust.weight < 0x1p-54 * c / (sigma * sigma))
                }
            }
            #expect(density.robustWeight(0.9 * far, multiplicity: 1).density > angles.outlierDensity)
        }
        let degrees = [options.sensors.azimuthStandardDeviation, options.sensors.elevationStandardDeviation].map {
            angles.at(variance: $0 * $0).farResidualSquared.squareRoot() * 180 / .pi
        }
        #expect(abs(degrees[0] - 27) < 1 && abs(degrees[1] - 46) < 1, "e_far \(degrees)°")
        let clean = RangeErrorDensity(outlierProbability: 0, outlierSpan: 1, excessProbability: 0, excessRange: 0...0).at(variance: 0.01)
        #expect(clean.farResidualSquared == .infinity && clean.farAngleTangent == .infinity)
    }

    @Test func withNewtonStepsTheKeptBankFollowsTheExactOneAndFindsTheTag() throws {
        // The acquisition above with the still batch's Newton steps: the kept bank stays within
        // 3 cm and 0.05 of weight of the bank solved whole (by Gauss–Newton) at every update, and
        // both agree on where the tag is.
        var options = FusionOptions()
        options.acquisition.stillBatchNewtonSteps = true
        let c = Self.compareBanks(Self.acquisitionWindow(count: 120), options: options, significant: 0.01)
        #expect(c.worstMetres < 0.03, "a kept hypothesis strayed \(c.worstMetres) m from the exact one")
        #expect(c.worstWeight < 0.05, "a weight strayed by \(c.worstWeight)")
        #expect(c.extended > 0)
        #expect((c.kept.moments.meanInWorld - Vector3(2.5, 0.8, -3.6)).length < 0.3)
        #expect((c.kept.moments.meanInWorld - c.exact.moments.meanInWorld).length < 0.03)
    }

    @Test func aKeptModelIsTheSumOfItsEntriesAtItsPoint() throws {
        // However the model was built — solved, extended, linearised afresh — it must equal the
        // window's model at its point, entry for entry.
        let entries = Self.acquisitionWindow(count: 90)
        let options = FusionOptions()
        var mixture = PositionMixture(capacity: 4)
        mixture.reset([PositionHypothesis(logWeight: 0, meanInWorld: Vector3(2.0, 1.0, -3.0), covariance: .scaledIdentity(0.6))])
        var window = MeasurementWindow(capacity: 160)
        for entry in entries {
            window.append(entry)
            BatchRefinement.refine(&mixture, window: window, options: options)
        }
        let h = mixture.hypotheses[0]
        let kept = h.linearisation
        #expect(kept.entryCount == window.entries.count)
        let fresh = try #require(BatchRefinement.linearisation(of: h, at: kept.point, window: window, options: options))
        func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-7 * max(1, abs(a), abs(b)) }
        func norm(_ m: Matrix3) -> Double { (m * m.transposed).trace.squareRoot() }
        func close(_ a: Matrix3, _ b: Matrix3) -> Bool { norm(a - b) <= 1e-7 * max(1, norm(b)) }
        #expect(close(kept.information, fresh.information))
        #expect((kept.gradient - fresh.gradient).length <= 1e-7 * max(1, fresh.gradient.length))
        #expect(close(kept.cost, fresh.cost))
        #expect(close(kept.pathWeightedInformation, fresh.pathWeightedInformation))
        #expect(close(kept.logMissing, fresh.logMissing))
        #expect(fresh.logMissing < 0, "the window holds missing directions inside the cone's edge")
        // And the hypothesis sits at the model's minimum: exactly when the model was extended,
        // within the solve's 1 % of a σ (`δᵀAδ` below `solveStepTolerance`) when the last
        // refinement solved it from its prior.
        let step = try #require(kept.information.inverse) * kept.gradient
        let offset = kept.point + step - h.meanInWorld
        #expect(kept.information.quadraticForm(offset) < options.acquisition.solveStepTolerance,
                "\(offset.length) m from the model's minimum")
    }

    @Test func theMissingDirectionsGradientIsTheirSlope() throws {
        // Entries whose direction went missing, the tag near the cone's edge (where ρ changes
        // fastest): the model's gradient of Σ log ρ matches central differences.
        let options = FusionOptions()
        let entries = Self.acquisitionWindow(count: 200).filter(\.directionMissing)
        #expect(entries.count > 10)
        var window = MeasurementWindow(capacity: 400)
        for e in entries { window.append(e) }
        let h = PositionHypothesis(logWeight: 0, meanInWorld: Vector3(2.5, 0.8, -3.6), covariance: .scaledIdentity(1))
        for x in [Vector3(2.5, 0.8, -3.6), Vector3(3.4, 0.5, -2.1), Vector3(1.0, 1.6, -4.0)] {
            let model = try #require(BatchRefinement.linearisation(of: h, at: x, window: window, options: options))
            let step = 1e-5
            for axis in [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)] {
                let plus = try #require(BatchRefinement.linearisation(of: h, at: x + step * axis, window: window, options: options))
                let minus = try #require(BatchRefinement.linearisation(of: h, at: x - step * axis, window: window, options: options))
                let slope = (plus.logMissing - minus.logMissing) / (2 * step)
                #expect(abs(model.logMissingGradient.dot(axis) - slope) <= 1e-4 * max(1, abs(slope)),
                        "at \(x) along \(axis): \(model.logMissingGradient.dot(axis)) against \(slope)")
            }
        }
    }

    @Test func aReshapedWindowIsSolvedAfresh() throws {
        // Appending keeps the revision (models extend); thinning, cutting back and clearing
        // change it (models are rebuilt).
        var window = MeasurementWindow(capacity: 8)
        let entries = Self.acquisitionWindow(count: 9)
        for e in entries.prefix(8) { window.append(e) }
        let appended = window.revision
        window.append(entries[8])   // full: thinned
        #expect(window.revision != appended)
        let thinned = window.revision
        window.removeLatest(ranges: 1)
        #expect(window.revision != thinned)
        let cut = window.revision
        window.removeAll()
        #expect(window.revision != cut)

        // A hypothesis whose model belongs to an older revision is re-solved from its prior:
        // its model then sums the window as it is.
        let options = FusionOptions()
        var mixture = PositionMixture(capacity: 2)
        mixture.reset([PositionHypothesis(logWeight: 0, meanInWorld: Vector3(2.0, 1.0, -3.0), covariance: .scaledIdentity(0.6))])
        var small = MeasurementWindow(capacity: 8)
        for e in entries.prefix(8) {
            small.append(e)
            BatchRefinement.refine(&mixture, window: small, options: options)
        }
        small.append(entries[8])
        BatchRefinement.refine(&mixture, window: small, options: options)
        let model = mixture.hypotheses[0].linearisation
        #expect(model.windowRevision == small.revision && model.entryCount == small.entries.count)
        let fresh = try #require(BatchRefinement.linearisation(of: mixture.hypotheses[0], at: model.point, window: small, options: options))
        #expect(abs(model.cost - fresh.cost) < 1e-9 * max(1, abs(fresh.cost)))
    }

    /// A Channel Sounding acquisition: a still tag 4 m away, the device sweeping and stepping,
    /// ranges (σ 0.35 m) at 5 Hz, one run of ranges 1.2 m long from 5 s to 7 s (a reflection that
    /// lasted) and a few gross outliers. Seeded noise.
    static func channelSoundingWindow(count: Int) -> [WindowEntry] {
        var noise = NoiseStream(seed: 3, source: "incremental-burst")
        let truth = Vector3(0.8, 1.0, -3.9)
        var entries: [WindowEntry] = []
        for k in 0..<count {
            let t = Double(k) * 0.2
            let a = Vector3(0.4 * sin(1.3 * t) + 0.08 * t, 1.4 + 0.3 * sin(0.7 * t), 0.2 * sin(0.3 * t) - 0.05 * t)
            var range = (truth - a).length + noise.gaussian(standardDeviation: 0.35)
            if t >= 5, t <= 7 { range += 1.2 }
            if k % 17 == 9 { range -= 2.5 }
            var entry = WindowEntry(antennaInWorld: a, worldFromDevice: .identity, rangeMetres: range, angles: Vector2(0, 0),
                                    hasRange: true, direction: .none, directionMissing: false, multiplicity: 1, timestamp: t)
            entry.pathLengthMetres = 0.1 * t
            entries.append(entry)
        }
        return entries
    }

    @Test func aBurstChainsForwardPassContinuesExactly() throws {
        // The chain's likelihood kept by continuing the forward pass range by range equals the
        // whole window's at the same point: the evidence stays exact between smoothings.
        let options = FusionOptions().forRanging(.bluetoothChannelSounding)
        #expect(options.gating.rangeMultipathBurstSeconds > 0)
        let entries = Self.channelSoundingWindow(count: 80)
        let h = PositionHypothesis(logWeight: 0, meanInWorld: Vector3(0.6, 1.1, -3.6), covariance: .scaledIdentity(0.5))
        var head = MeasurementWindow(capacity: 200)
        for e in entries.prefix(30) { head.append(e) }
        let x = Vector3(0.7, 0.9, -3.8)
        var kept = try #require(BatchRefinement.linearisation(of: h, at: x, window: head, options: options))
        var whole = head
        for e in entries.dropFirst(30) {
            whole.append(e)
            kept = BatchRefinement.adding(e, to: kept, options: options)
        }
        let exact = try #require(BatchRefinement.linearisation(of: h, at: x, window: whole, options: options))
        #expect(abs(kept.cost - exact.cost) < 1e-8 * max(1, abs(exact.cost)), "\(kept.cost) against \(exact.cost)")
        #expect(abs(kept.forwardLineOfSight - exact.forwardLineOfSight) < 1e-12)
        // Filtered weights are not the smoothed ones: the run of long ranges is weighed differently.
        #expect(kept.information != exact.information)
    }

    @Test func aChannelSoundingBankFollowsTheExactOne() throws {
        // The tiled bank of a Channel Sounding tag, kept update by update, against the bank solved
        // whole at every update: the hypotheses that matter within 0.3 σ, the weights within 0.05
        // (within 0.01, in fact).
        // A burst chain's Gauss–Newton step that climbs the chain's cost at its whole length and
        // at ½, ¼ and ⅛ of it is given up (`Constants.burstChainStepTrials`): the kept bank reads
        // its window about 3,130 times (trying the lengths a bank without a chain tries, about
        // 3,370), a tenth of what the exact bank reads, and follows it as closely as before.
        let c = Self.compareBanks(Self.channelSoundingWindow(count: 90), options: FusionOptions().forRanging(.bluetoothChannelSounding),
                                  significant: 0.05)
        #expect(c.worstSigmas < 0.3, "a kept hypothesis strayed \(c.worstSigmas) σ (\(c.worstMetres) m) from the exact one")
        #expect(c.worstWeight < 0.05, "a weight strayed by \(c.worstWeight)")
        #expect(c.worstWeight < 0.01, "a weight strayed by \(c.worstWeight)")
        #expect((c.kept.moments.meanInWorld - c.exact.moments.meanInWorld).length < 0.05)
        #expect(c.keptPasses < 3_260, "\(c.keptPasses) window passes")
        #expect(c.keptPasses * 10 < c.exactPasses, "\(c.keptPasses) window passes against the exact bank's \(c.exactPasses)")
    }

    /// A still phone's window: ranges from one antenna position (a few millimetres of VIO
    /// jitter) to a tag 6 m off, with a run of long ranges and a short one now and then.
    static func stillPhoneChannelSoundingWindow(count: Int) -> [WindowEntry] {
        var noise = NoiseStream(seed: 5, source: "incremental-still-phone")
        let truth = Vector3(1.5, 0.9, -5.6)
        return (0..<count).map { k in
            let t = Double(k) * 0.25
            let a = Vector3(0, 1.2, 0) + Vector3(noise.gaussian(standardDeviation: 0.002), noise.gaussian(standardDeviation: 0.002),
                                                 noise.gaussian(standardDeviation: 0.002))
            var range = (truth - a).length + noise.gaussian(standardDeviation: 0.3)
            if t >= 6, t <= 8 { range += 1.5 }
            if k % 13 == 7 { range -= 2 }
            return WindowEntry(antennaInWorld: a, worldFromDevice: .identity, rangeMetres: range, angles: Vector2(0, 0),
                               hasRange: true, direction: .none, directionMissing: false, multiplicity: 1, timestamp: t)
        }
    }

    /// A still phone's bank, whose tiles the ranges cannot tell apart, smooths the burst chains
    /// of its eight heaviest hypotheses at every update and the others' after 16 updates — and
    /// stays with the bank solved whole at every update: every hypothesis within 0.3 σ of its
    /// twin, every weight within 0.01, the same distance.
    @Test func aStillPhonesBankSmoothsItsHeaviestAndKeepsToTheExactOne() throws {
        let options = FusionOptions().forRanging(.bluetoothChannelSounding)
        let entries = Self.stillPhoneChannelSoundingWindow(count: 60)
        let c = Self.compareBanks(entries, options: options, significant: 0)
        let updates = Double(entries.count - 1), hypotheses = Double(c.kept.count)
        #expect(hypotheses > 30, "the bank should stay unresolved: \(hypotheses) hypotheses")
        // Eight smoothings per update, the other ~67 hypotheses' every 16th update, and a few
        // rebuilds where a step leaves a model's reach: about 16 window passes per update
        // (with the others smoothed every fourth update, about 30).
        let passesPerUpdate = Double(c.keptPasses) / updates
        #expect(passesPerUpdate < 20, "\(passesPerUpdate) window passes per update")
        #expect(c.worstSigmas < 0.3, "a kept hypothesis strayed \(c.worstSigmas) σ (\(c.worstMetres) m) from the exact one")
        #expect(c.worstWeight < 0.01, "a weight strayed by \(c.worstWeight)")
        let antenna = entries[0].antennaInWorld
        let keptDistance = (c.kept.moments.meanInWorld - antenna).length, exactDistance = (c.exact.moments.meanInWorld - antenna).length
        #expect(abs(keptDistance - exactDistance) < 0.01, "\(keptDistance) m against \(exactDistance) m")
    }

    /// The range density's pieces give its line-of-sight and multipath terms as their own forms
    /// do — within 10⁻¹² of them wherever a term is more than 10⁻⁷ of its peak, within 10⁻¹⁸ m⁻¹
    /// elsewhere, 0 beyond their reach — for a σ from 5 cm to 6 m, and stand aside where they
    /// cannot: a density without gross outliers (whose `ε/span` hides the tails they leave out),
    /// one without a multipath term, a σ too small for their storage, and a variance they were
    /// not fitted at.
    @Test func theRangeDensitysPiecesAreItsTerms() {
        let density = FusionOptions().forRanging(.bluetoothChannelSounding).rangeErrorDensity
        #expect(density.excessDensity > 0 && density.outlierDensity > 0)
        var pieces = RangeDensityPieces()
        for sigma in [0.05, 0.38, 1.5, 6.0] {
            let v = sigma * sigma
            pieces.prepare(density, variance: v)
            #expect(pieces.isUsable(for: density, variance: v))
            let lower = density.excessMinimum - 14 * sigma, upper = density.excessMaximum + 14 * sigma
            pieces.withView(for: density, variance: v) { view in
                guard let view else { Issue.record("no pieces at σ \(sigma) m"); return }
                func check(_ name: String, peak: Double, exact: (Double) -> Double, fitted: (Double) -> Double) {
                    var worst = 0.0
                    for k in 0...20_000 {
                        let e = -14 * sigma + (upper + 14 * sigma) * Double(k) / 20_000
                        let x = exact(e), y = fitted(e)
                        if x > 1e-7 * peak {
                            worst = max(worst, abs(y - x) / x)
                        } else {
                            #expect(abs(y - x) < 1e-18, "\(name), σ \(sigma) m, e \(e) m: \(y) against \(x)")
                        }
                    }
                    #expect(worst < 1e-12, "\(name), σ \(sigma) m: relative error \(worst)")
                    #expect(fitted(.nan) == 0 && fitted(upper + 100) == 0 && fitted(lower - 100) == 0)
                }
                check("line of sight", peak: density.inlier(0, variance: v),
                      exact: { density.inlier($0, variance: v) }, fitted: view.inlier)
                check("multipath", peak: density.excessDensity,
                      exact: { density.excess($0, variance: v) }, fitted: view.excess)
            }
            #expect(!pieces.isUsable(for: density, variance: 2 * v))
        }
        let noOutliers = RangeErrorDensity(outlierProbability: 0, outlierSpan: 20, excessProbability: 0.2, excessRange: 0.2...1.5)
        pieces.prepare(noOutliers, variance: 0.1)
        #expect(!pieces.isUsable(for: noOutliers, variance: 0.1))
        let symmetric = RangeErrorDensity(outlierProbability: 0.02, outlierSpan: 20, excessProbability: 0, excessRange: 0...0)
        pieces.prepare(symmetric, variance: 0.1)
        #expect(!pieces.isUsable(for: symmetric, variance: 0.1))
        pieces.prepare(density, variance: 1e-6)
        #expect(!pieces.isUsable(for: density, variance: 1e-6))
        var none = RangeDensityPieces(capacity: 0)
        none.prepare(density, variance: 0.1)
        #expect(!none.isUsable(for: density, variance: 0.1))
    }

    /// A Channel Sounding bank refined update by update reading its range density off the pieces
    /// ends where the one computing it from its exponential and error functions does: every
    /// hypothesis within a micrometre, every weight within 10⁻⁹, the same window passes.
    @Test func aBankReadingTheRangeDensitysPiecesSolvesAsItsOwnFormsDo() {
        let options = FusionOptions().forRanging(.bluetoothChannelSounding)
        let entries = Self.channelSoundingWindow(count: 60)
        var pieces = RangeDensityPieces()
        pieces.prepare(options.rangeErrorDensity, variance: options.sensors.rangeStandardDeviation * options.sensors.rangeStandardDeviation)
        var computed = Self.tiledBank(first: entries[0], options: options), fitted = computed
        var window = MeasurementWindow(capacity: 160)
        var passes = (0, 0)
        for entry in entries.dropFirst() {
            window.append(entry)
            passes.0 += BatchRefinement.refine(&computed, window: window, options: options)
            passes.1 += BatchRefinement.refine(&fitted, window: window, options: options, densityPieces: pieces)
        }
        #expect(passes.0 == passes.1)
        #expect(computed.hypotheses.count == fitted.hypotheses.count && !computed.hypotheses.isEmpty)
        for (a, b) in zip(computed.hypotheses, fitted.hypotheses) {
            #expect((a.meanInWorld - b.meanInWorld).length < 1e-6)
            #expect(abs(exp(a.logWeight) - exp(b.logWeight)) < 1e-9)
        }
    }

    /// The burst chains smoothed at every update are those of the eight heaviest hypotheses
    /// holding 1 % or more: the rank's weight is found exactly, whatever the order, and is 0
    /// in a bank of fewer.
    @Test func theEighthHeaviestWeightIsFoundInAnyOrder() {
        let weights = [0.02, 0.2, 0.01, 0.05, 0.03, 0.15, 0.04, 0.06, 0.12, 0.08, 0.1, 0.09, 0.05]
        var mixture = PositionMixture(capacity: 32)
        mixture.reset(weights.enumerated().map { i, w in
            PositionHypothesis(logWeight: log(w), meanInWorld: Vector3(Double(i), 0, 0), covariance: .identity)
        })
        let total = weights.reduce(0, +)
        let expected = weights.sorted(by: >)[7] / total
        #expect(abs(BatchRefinement.heaviestWeight(rank: 8, in: mixture) - expected) < 1e-12)
        #expect(abs(BatchRefinement.heaviestWeight(rank: 1, in: mixture) - 0.2 / total) < 1e-12)
        var small = PositionMixture(capacity: 8)
        small.reset(Array(repeating: PositionHypothesis(logWeight: 0, meanInWorld: .zero, covariance: .identity), count: 3))
        #expect(BatchRefinement.heaviestWeight(rank: 8, in: small) == 0)
    }
}
