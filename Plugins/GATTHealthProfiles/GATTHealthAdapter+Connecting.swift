import AdapterKit
import Transport

extension GATTHealthAdapter: ConnectingAdapter {
    /// The measurement characteristics of the standard health profiles (indications where the
    /// device offers them: stored measurements arrive that way).
    public var gattSubscriptions: Set<BLEUUID> {
        [GATTHealthUUID.weightMeasurement, GATTHealthUUID.bodyCompositionMeasurement,
         GATTHealthUUID.temperatureMeasurement, GATTHealthUUID.heartRateMeasurement, GATTHealthUUID.rscMeasurement,
         GATTHealthUUID.bloodPressureMeasurement, GATTHealthUUID.glucoseMeasurement,
         GATTHealthUUID.plxSpotCheckMeasurement, GATTHealthUUID.plxContinuousMeasurement]
    }

    /// Device information and the sensor locations the session keeps in metadata.
    public var gattReads: Set<BLEUUID> {
        [GATTHealthUUID.manufacturerName, GATTHealthUUID.modelNumber, GATTHealthUUID.serialNumber,
         GATTHealthUUID.firmwareRevision, GATTHealthUUID.temperatureType, GATTHealthUUID.bodySensorLocation]
    }
}
