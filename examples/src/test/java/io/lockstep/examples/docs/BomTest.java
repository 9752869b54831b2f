package io.lockstep.examples.docs;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The BOM has no parent (so that importing it pins nothing but Lockstep), so nothing keeps its version and its list
 * in step with the reactor but this: its version is the reactor's, and it manages every library artifact.
 */
class BomTest
{
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** The artifacts a user's project may depend on; the rest of the reactor is examples, tests and benchmarks. */
    private static final List<String> LIBRARIES =
        List.of("cluster-service-api", "archive-log", "cluster-consensus", "standby", "testkit");

    @Test
    void theBomHasTheReactorsVersionAndEveryLibrary() throws Exception
    {
        final Document root = read(ROOT.resolve("pom.xml"));
        final Document bom = read(ROOT.resolve("bom").resolve("pom.xml"));
        assertEquals(child(root.getDocumentElement(), "version"), child(bom.getDocumentElement(), "version"),
            "bom/pom.xml's version");

        final List<String> managed = new ArrayList<>();
        final NodeList dependencies = bom.getElementsByTagName("dependency");
        for (int i = 0; i < dependencies.getLength(); i++)
        {
            final Element dependency = (Element)dependencies.item(i);
            managed.add(child(dependency, "artifactId"));
            assertEquals("${project.version}", child(dependency, "version"), child(dependency, "artifactId"));
        }
        assertEquals(LIBRARIES, managed, "the artifacts the BOM manages");
        // A module added to the reactor is a library unless it is named here: then the BOM must list it too.
        final List<String> modules = new ArrayList<>();
        final NodeList listed = root.getElementsByTagName("module");
        for (int i = 0; i < listed.getLength(); i++)
        {
            modules.add(listed.item(i).getTextContent().trim());
        }
        modules.removeAll(List.of("bom", "examples", "itests", "benchmarks"));
        assertEquals(new java.util.TreeSet<>(LIBRARIES), new java.util.TreeSet<>(modules),
            "the reactor's library modules: add a new one to bom/pom.xml and to LIBRARIES");
    }

    private static Document read(final Path file) throws Exception
    {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
    }

    private static String child(final Element parent, final String name)
    {
        final NodeList children = parent.getChildNodes();
        for (int i = 0; i < children.getLength(); i++)
        {
            if (children.item(i) instanceof Element e && name.equals(e.getTagName()))
            {
                return e.getTextContent().trim();
            }
        }
        throw new AssertionError(parent.getTagName() + " has no " + name);
    }
}
