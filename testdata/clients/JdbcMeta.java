// pgJDBC's DatabaseMetaData against streamsql, run by engine/clients_test.go
// with the JDBC URL as the first argument: it prints what getTables and
// getColumns, getPrimaryKeys, getIndexInfo and getImportedKeys/getExportedKeys
// return, then "ok".
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

public class JdbcMeta {
  public static void main(String[] args) throws Exception {
    try (Connection c = DriverManager.getConnection(args[0])) {
      try (Statement s = c.createStatement()) {
        s.execute("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2))");
        s.execute("CREATE MATERIALIZED VIEW item_count AS SELECT count(*) AS n FROM items");
        s.execute("INSERT INTO items VALUES (1, 'a', 1.50)");
        s.execute("CREATE TABLE stock (shop int, item int, qty int, PRIMARY KEY (shop, item))");
      }
      DatabaseMetaData md = c.getMetaData();
      try (ResultSet r = md.getTables(null, "public", "%", new String[] {"TABLE", "MATERIALIZED VIEW"})) {
        while (r.next()) {
          System.out.println("table " + r.getString("TABLE_NAME") + " " + r.getString("TABLE_TYPE"));
        }
      }
      try (ResultSet r = md.getColumns(null, "public", "items", "%")) {
        while (r.next()) {
          System.out.println("column " + r.getString("COLUMN_NAME") + " " + r.getString("TYPE_NAME")
              + " " + r.getInt("DATA_TYPE") + " nullable=" + r.getString("IS_NULLABLE"));
        }
      }
      try (ResultSet r = md.getPrimaryKeys(null, "public", "stock")) {
        while (r.next()) {
          System.out.println("pk " + r.getString("TABLE_NAME") + " " + r.getString("COLUMN_NAME")
              + " " + r.getInt("KEY_SEQ") + " " + r.getString("PK_NAME"));
        }
      }
      try (ResultSet r = md.getIndexInfo(null, "public", "stock", false, false)) {
        while (r.next()) {
          System.out.println("index " + r.getString("INDEX_NAME") + " " + r.getString("COLUMN_NAME")
              + " " + r.getInt("ORDINAL_POSITION") + " unique=" + !r.getBoolean("NON_UNIQUE"));
        }
      }
      try (ResultSet r = md.getImportedKeys(null, "public", "stock")) {
        while (r.next()) {
          System.out.println("imported " + r.getString("FKCOLUMN_NAME"));
        }
      }
      try (ResultSet r = md.getExportedKeys(null, "public", "items")) {
        while (r.next()) {
          System.out.println("exported " + r.getString("PKCOLUMN_NAME"));
        }
      }
      try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT n FROM item_count")) {
        r.next();
        System.out.println("count " + r.getLong(1));
      }
    }
    System.out.println("ok");
  }
}
